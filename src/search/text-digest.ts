// A digest of an indexed text: a saved index keeps it instead of the text, to tell on an upsert
// whether a document changed. Not cryptographic: it tells edits apart, not adversaries (a
// collision only skips re-indexing a text its own writer could have written anyway).

/** 53 bits (a safe integer): two independent 32-bit multiplicative hashes, the length mixed in. */
export function textDigest(text: string): number {
  let a = 0x811c9dc5 ^ text.length
  let b = 0x27d4eb2f ^ Math.imul(text.length, 0x9e3779b1)
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995)
    b ^= b >>> 13
  }
  // final avalanche, so texts that differ in their last character differ in every bit
  a ^= a >>> 16
  a = Math.imul(a, 0x85ebca6b)
  a ^= a >>> 13
  b ^= b >>> 16
  b = Math.imul(b, 0xc2b2ae35)
  b ^= b >>> 16
  return (b & 0x1fffff) * 0x1_0000_0000 + (a >>> 0)
}
