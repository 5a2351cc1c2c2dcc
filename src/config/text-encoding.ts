/**
 * A config file saved in another Unicode encoding than UTF-8, named from its first bytes:
 * UTF-16 or UTF-32 (a Windows editor's "Unicode" is UTF-16 LE with a byte order mark). Read as
 * UTF-8, such a file was refused with its bytes shown as text, `got "��a\u0000g\u0000e…"` (a
 * hostile new operator's trial 45, Info: test/regressions/config-utf16-file-shown-as-garbage.test.ts).
 *
 * A byte order mark names the encoding; without one, text that starts with two ASCII
 * characters (every config starts with a key or a comment) shows UTF-16 by its zero bytes:
 * `a\0g\0` (LE), `\0a\0g` (BE). A NUL elsewhere in a UTF-8 file is not taken for UTF-16.
 */

/** Whether `b` is an ASCII byte other than NUL. */
const ascii = (b: number | undefined): boolean => b !== undefined && b > 0 && b < 0x80;

/** The encoding `bytes` (the file's first bytes) look like when not UTF-8, with why (`UTF-16 LE (byte order mark FF FE)`), else undefined. */
export function otherUnicodeEncoding(bytes: Uint8Array): string | undefined {
  const [b0, b1, b2, b3] = bytes;
  if (b0 === 0xff && b1 === 0xfe && b2 === 0 && b3 === 0) return 'UTF-32 LE (byte order mark FF FE 00 00)';
  if (b0 === 0 && b1 === 0 && b2 === 0xfe && b3 === 0xff) return 'UTF-32 BE (byte order mark 00 00 FE FF)';
  if (b0 === 0xff && b1 === 0xfe) return 'UTF-16 LE (byte order mark FF FE)';
  if (b0 === 0xfe && b1 === 0xff) return 'UTF-16 BE (byte order mark FE FF)';
  if (ascii(b0) && b1 === 0 && ascii(b2) && b3 === 0) return 'UTF-16 LE (every other byte is 0)';
  if (b0 === 0 && ascii(b1) && b2 === 0 && ascii(b3)) return 'UTF-16 BE (every other byte is 0)';
  return undefined;
}

/** The problem of a file in `encoding` (from {@link otherUnicodeEncoding}). */
export function notUtf8Message(encoding: string): string {
  return `the file is not UTF-8: it looks like ${encoding}; save it as UTF-8`;
}
