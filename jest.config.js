/**
 * Unit tests run without a cluster. e2e: the embedded cluster with kwok nodes (npm run test:e2e).
 * real: real Pulp on the embedded cluster's real node (npm run test:real).
 */
const common = {
  preset: "ts-jest",
  testEnvironment: "node",
  // Transpile only (ts-jest reads `isolatedModules` from tsconfig.json): `npm run build` (tsc --noEmit) and
  // `npm run lint` type-check; per-file type checking here doubled the unit time on a 2-core machine.
  transform: { "^.+\\.ts$": ["ts-jest", {}] },
};

module.exports = {
  // A program render takes about a second alone; 30 s leaves room for a busy 2-core machine.
  testTimeout: 30000,
  // Jest's default is one worker fewer than the cores: one on a 2-core machine, where two finish sooner.
  maxWorkers: 2,
  // A worker's heap grows with every test file it runs (to about a GB by the last, --logHeapUsage), and
  // garbage collection with it; past this a worker is replaced after its test file.
  workerIdleMemoryLimit: "512MB",
  projects: [
    {
      ...common,
      displayName: "unit",
      testMatch: ["<rootDir>/test/unit/**/*.test.ts"],
      // A minute (a build and an npm install): npm run test:package, beside npm run build in CI.
      testPathIgnorePatterns: ["/node_modules/", "<rootDir>/test/unit/package/"],
      // Jest loads every module again in each test file; these two, which @pulumi/pulumi requires when
      // imported, load on first use instead (test/unit/helpers/lazy/).
      moduleNameMapper: {
        "^typescript$": "<rootDir>/test/unit/helpers/lazy/typescript.js",
        "^@npmcli/arborist$": "<rootDir>/test/unit/helpers/lazy/arborist.js",
        // The examples import the package by name, as a user's program does: its source here.
        "^pulp-pulumi$": "<rootDir>/components/index.ts",
      },
      setupFilesAfterEnv: [
        "<rootDir>/test/unit/helpers/stackTraces.ts",
        "<rootDir>/test/unit/helpers/closures.ts",
      ],
    },
    // unit too (no cluster), but slow: the npm package as users install it.
    { ...common, displayName: "package", testMatch: ["<rootDir>/test/unit/package/**/*.test.ts"] },
    {
      ...common,
      displayName: "e2e",
      testMatch: ["<rootDir>/test/e2e/**/*.test.ts"],
      testPathIgnorePatterns: ["<rootDir>/test/e2e/real/"],
    },
    { ...common, displayName: "real", testMatch: ["<rootDir>/test/e2e/real/**/*.test.ts"] },
  ],
};
