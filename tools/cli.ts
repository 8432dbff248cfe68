// What every shipped command-line tool shares.

/** Whether the command line asks for the usage (`--help` or `-h`): the tool prints it and exits 0. */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes("--help") || argv.includes("-h");
}

/** Runs a tool's main and exits with its code; an error is one line on stderr and exit code 1. */
export function runMain(main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (err: Error) => {
      console.error(err.message);
      process.exit(1);
    },
  );
}
