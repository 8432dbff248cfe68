// Unit: the configuration reference has one source, components/config/reference.ts. docs/configuration.md
// holds exactly the table generated from it (`npm run docs:config` writes it), and what the reference says
// of defaults is what the schema does: a scalar's default is the schema's, an object's default names
// only values the schema gives, and an image a row names is the schema's default image.
import * as fs from "fs";
import * as yaml from "js-yaml";
import { CONFIG_REFERENCE, ConfigKey, KeyDoc } from "../../../components/config/reference";
import { configSchema } from "../../../components/config/schema";
import { CONFIG_DOC, withGeneratedTable } from "../../../testbed/docs/configReference";

const rows = (Object.entries(CONFIG_REFERENCE) as [ConfigKey, KeyDoc][]).filter(
  (e): e is [ConfigKey, Exclude<KeyDoc, { sameAs: ConfigKey }>] => !("sameAs" in e[1]),
);
const schemaDefault = (key: ConfigKey): unknown => {
  const parsed = configSchema.shape[key].safeParse(undefined);
  return parsed.success ? parsed.data : undefined;
};

test("docs/configuration.md holds the generated table (npm run docs:config)", () => {
  const doc = fs.readFileSync(CONFIG_DOC, "utf8");
  expect(withGeneratedTable(doc)).toBe(doc);
});

test.each(rows)("%s: the default the reference gives is the schema's", (key, doc) => {
  const value = schemaDefault(key);
  const code = /^`([^`]*)`/.exec(doc.default)?.[1];
  if (code === undefined) {
    // In words ("required", "see below", "none"): the schema has no default, or an object one it describes.
    expect({
      key,
      prose: value === undefined || (typeof value === "object" && !Array.isArray(value)),
    }).toEqual({
      key,
      prose: true,
    });
    return;
  }
  const said = yaml.load(code);
  if (typeof value === "object" && value !== null && !Array.isArray(value))
    expect(value).toMatchObject(said as object);
  else expect(said).toEqual(value);
});

test.each(rows)("%s: an image the reference names is the schema's default", (key, doc) => {
  const images = [...doc.meaning.matchAll(/`((?:[\w-]+\.)+[a-z]+\/[\w./-]+:[\w.-]+)`/g)].map((m) => m[1]);
  const defaults = JSON.stringify(schemaDefault(key) ?? {});
  for (const image of images)
    expect({ key, image, isDefault: defaults.includes(`"${image}"`) }).toEqual({
      key,
      image,
      isDefault: true,
    });
});
