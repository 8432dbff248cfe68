// A dynamic resource serializes its provider's closure when it is constructed (@pulumi/pulumi's
// runtime/closure walks every captured value, and loads TypeScript to parse functions): about a second of
// every test file that renders a whole install, for text no unit test reads. Unit tests get a placeholder
// instead; the serialized providers are checked where they run: the package test (their require()s resolve
// in a user's project) and every kwok and real-node suite. (setupFilesAfterEnv in jest.config.js.)
export {};

// eslint-disable-next-line @typescript-eslint/no-require-imports
const closure = require("@pulumi/pulumi/runtime/closure/serializeClosure") as {
  serializeFunction: (
    ...args: unknown[]
  ) => Promise<{ text: string; exportName: string; containsSecrets: boolean }>;
};
closure.serializeFunction = async () => ({
  text: "// not serialized under unit tests: test/unit/helpers/closures.ts",
  exportName: "handler",
  containsSecrets: false,
});
