import js from "@eslint/js";
import tseslint from "typescript-eslint";
import pulumi from "@pulumi/eslint-plugin";

export default tseslint.config(
  { ignores: ["node_modules/", ".state/", "coverage/", "dist/", "**/*.mjs", "**/*.js"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { "@pulumi": pulumi },
    rules: {
      "@pulumi/no-output-in-template-literal": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  {
    // Tests read back whatever the mocks recorded, and the shipped tools whatever kubectl returns;
    // typing every Kubernetes object there buys nothing.
    files: ["test/**/*.ts", "testbed/harness.ts", "tools/stack/**/*.ts", "tools/kube.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
);
