/**
 * Fitting a table of private rows to the owner's terminal (08 §10).
 *
 * A row that wraps becomes noise: cli-table3 would break a long cell over many
 * lines and the terminal would then wrap every line again. So the layout
 * decides up front which columns fit and how wide each one is, and every row
 * stays one line. Ids and dates are kept whole (the owner copies an id into
 * `magnt review <kind> <id>`), short words keep their width, and free text
 * gets what is left, cut with an ellipsis. Columns that do not fit are left
 * out (lowest priority first) rather than squeezed into unreadable slivers;
 * the caller names them so the owner knows where to look.
 */
import { displayWidth, truncateToWidth } from "./terminal-text";

/**
 * How a column behaves when space is short:
 * - `id`, `date`, `word`: never cut (the column is as wide as its widest value and its header);
 * - `text`: free text, cut with … to the width it gets, at least `TEXT_MIN_WIDTH` columns.
 */
export type ColumnShape = "id" | "date" | "word" | "text";

export interface LayoutColumn {
  name: string;
  shape: ColumnShape;
  /** 1 = shown first and always; larger numbers are dropped first. */
  priority: number;
  /** For a `text` column: the narrowest it is shown, instead of `TEXT_MIN_WIDTH` (short values such as a check's expected value). */
  minWidth?: number;
}

/** The narrowest a text column is shown; below this it is left out instead. */
export const TEXT_MIN_WIDTH = 20;
/** The widest a text column ever gets (08 §3 cuts table cells at 60). */
export const TEXT_MAX_WIDTH = 60;
/** cli-table3's padding: one space left and right of every cell. */
const CELL_PADDING = 2;

export interface TableLayout {
  /** The columns shown, in their declared (display) order, with their content widths. */
  shown: { column: LayoutColumn; index: number; width: number }[];
  /** The names of the columns left out, in declared order. */
  hidden: string[];
}

/**
 * Chooses columns and widths so that the table (borders and padding
 * included) fits `totalWidth`. `cells[r][c]` are sanitised one-line strings
 * in declared column order. The priority-1 column is always shown, even when
 * it alone is wider than the terminal.
 */
export function layoutTable(columns: readonly LayoutColumn[], cells: readonly (readonly string[])[], totalWidth: number): TableLayout {
  const natural = columns.map((column, index) => {
    const widest = Math.max(displayWidth(column.name), ...cells.map((row) => displayWidth(row[index] ?? "")));
    return column.shape === "text" ? Math.min(widest, TEXT_MAX_WIDTH) : widest;
  });
  const minimum = columns.map((column, index) => (column.shape === "text" ? Math.min(natural[index]!, column.minWidth ?? TEXT_MIN_WIDTH) : natural[index]!));
  const byPriority = columns.map((column, index) => ({ column, index })).sort((a, b) => a.column.priority - b.column.priority || a.index - b.index);

  const widths = new Map<number, number>();
  let used = 1; // the left border
  for (const [rank, { index }] of byPriority.entries()) {
    const need = minimum[index]! + CELL_PADDING + 1; // content, padding, right border
    // Stop at the first column that does not fit: the shown set is always a prefix of the
    // priority order, so a small low-priority column never takes room from the main text.
    if (rank > 0 && used + need > totalWidth) break;
    widths.set(index, minimum[index]!);
    used += need;
  }

  // Give what is left to the text columns, one column at a time in priority order, up to their natural width.
  let spare = totalWidth - used;
  const growable = byPriority.filter(({ index, column }) => column.shape === "text" && widths.has(index));
  while (spare > 0) {
    let grew = false;
    for (const { index } of growable) {
      if (spare === 0) break;
      const width = widths.get(index)!;
      if (width < natural[index]!) {
        widths.set(index, width + 1);
        spare -= 1;
        grew = true;
      }
    }
    if (!grew) break;
  }

  return {
    shown: columns.flatMap((column, index) => (widths.has(index) ? [{ column, index, width: widths.get(index)! }] : [])),
    hidden: columns.filter((_, index) => !widths.has(index)).map((column) => column.name),
  };
}

/**
 * The columns of a plain table (`Output.table`): every column free text that
 * keeps at least its header's width (and `GENERIC_MIN_WIDTH`), shown in
 * declared order and dropped from the right when even those minimums do not fit.
 */
export function plainColumns(head: readonly string[]): LayoutColumn[] {
  return head.map((name, index) => ({ name, shape: "text", priority: index + 1, minWidth: Math.max(GENERIC_MIN_WIDTH, displayWidth(name)) }));
}

/** The narrowest a column of a plain table is cut to. */
export const GENERIC_MIN_WIDTH = 8;

/** The head and rows of a laid-out table, every cell cut to its column's width. */
export function fitCells(layout: TableLayout, cells: readonly (readonly string[])[]): { head: string[]; rows: string[][]; colWidths: number[] } {
  return {
    head: layout.shown.map(({ column, width }) => truncateToWidth(column.name, width)),
    rows: cells.map((row) => layout.shown.map(({ index, width }) => truncateToWidth(row[index] ?? "", width))),
    colWidths: layout.shown.map(({ width }) => width + CELL_PADDING),
  };
}
