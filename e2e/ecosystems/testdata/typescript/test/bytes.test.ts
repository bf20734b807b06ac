import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { formatBytes } from "../src/bytes";

describe("formatBytes", () => {
  it("keeps bytes whole", () => {
    assert.equal(formatBytes(512), "512 B");
  });
  it("uses binary units", () => {
    assert.equal(formatBytes(1536), "1.5 KiB");
    assert.equal(formatBytes(3 * 1024 * 1024), "3.0 MiB");
  });
});
