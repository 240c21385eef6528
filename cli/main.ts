// PLACEHOLDER: the magnt CLI is being built (issue 6).
process.stderr.write("magnt: not implemented yet\n");
process.exit(3);
