/**
 * Event blocks with an `id` field and no `data` (sse-stage.ts), between the line feeder and
 * eventsource-parser.
 *
 * Such a block dispatches no event, but it does set the stream's last event ID: WHATWG HTML
 * §9.2.6, "dispatch the event", step 1 sets the last event ID string from the buffer, and only
 * step 2 returns when the data buffer is empty. eventsource-parser 3 drops the block whole (it
 * calls `onEvent` only when there are data lines), so without this the host never got that
 * position: its Last-Event-ID stayed at an older event and a resume replayed from there
 * (reported failure: test/regressions/sse-id-only-block-drops-id.test.ts). The SSE stage
 * gives the host that id with the next event that has none of its own, or at the stream's end
 * (sse-stage.ts, "Event ids": one token per block was 20.4x the seller's bytes, a new user's
 * trial 9, F3).
 *
 * Texts are handed on to the parser in order, unchanged but where one is cut: a text that
 * holds an id line is cut at the start of that line and after the blank line that ends its
 * block, so that the parser's dispatch (or none) at that blank line is known before the text
 * goes on (a lone CR that ends a piece is handed on as CR LF, the same line break). Id lines
 * are read as eventsource-parser reads them: `id` alone or `id:`, one space after the colon
 * dropped, a value holding NUL ignored.
 *
 * Cost: a text without an id line, in no block with one (the usual text), is handed on whole
 * after a look at its start and a search for `\nid` and one for `\rid` (memchr-like, as the
 * parser's own searches for line breaks); a text with one is walked line by line, each kind
 * of search moving forward only (one pass per kind).
 */

const LF = 0x0a;
const CR = 0x0d;
const LOWER_I = 0x69;
const LOWER_D = 0x64;
const COLON = 0x3a;
const SPACE = 0x20;

/**
 * Hands the line feeder's texts on to eventsource-parser and reports each block with an id
 * and no data (module doc). One per stream; the parser's `onEvent` must call
 * {@link eventDispatched}.
 */
export class SseIdOnlyBlocks {
  /** The id of the block being parsed (its last valid id line so far), or undefined when it has none. */
  private id: string | undefined = undefined;
  /** The parser dispatched an event since the last cut. */
  private dispatched = false;
  /** The last text did not end with a line break (only the held line the line feeder's `finish` hands over). */
  private midLine = false;

  /**
   * @param parse    hands a text on to the parser: whole lines, in stream order
   * @param onIdOnly called, just after the parser was handed a block's blank line, with the
   *                 id of that block when it dispatched no event (the value of its last `id`
   *                 field without NUL: `""` for an empty one)
   */
  constructor(
    private readonly parse: (text: string) => void,
    private readonly onIdOnly: (id: string) => void,
  ) {}

  /** Call from the parser's `onEvent`: the event carries the block's id itself. */
  eventDispatched(): void {
    this.dispatched = true;
  }

  /**
   * No id line read in a block still open, and the last text ended with a line break: a
   * block that starts now is read whole by the next text (sse-chunk-taker.ts takeSimple may then
   * read an id-only or comment-only block itself: this watch's state after such a block is
   * the same as before it).
   */
  get atBlockStart(): boolean {
    return this.id === undefined && !this.midLine;
  }

  /** Forgets the block being parsed (the parser was reset: sse-chunk-taker.ts, after a skipped event). */
  reset(): void {
    this.id = undefined;
    this.midLine = false;
  }

  /**
   * Hands `text` on to the parser (see the module doc). `text` is what the line feeder hands
   * over (sse-boundaries.ts SseLineFeeder): whole lines, a CR at its end sent as CR LF; at the
   * stream's end, a last line without its break, then the break.
   */
  feed(text: string): void {
    const n = text.length;
    if (n === 0) return;
    const startsMidLine = this.midLine;
    const lastCode = text.charCodeAt(n - 1);
    this.midLine = lastCode !== LF && lastCode !== CR;
    // The usual text: no id line, in no block with one.
    if (this.id === undefined && !mayHoldIdLine(text)) {
      this.parse(text);
      return;
    }
    const scan = new LineScan(text);
    /** Text before this offset was handed on. */
    let fed = 0;
    /** Where the block's first id line starts in this text (0: before it). */
    let idFrom = 0;
    // The end of a line begun in the last text (its fields were read there) is no line.
    let at = startsMidLine ? scan.nextLine(scan.lineBreak(0)) : 0;
    // Each pass moves `at` to the next line start (or the end): at most one pass per line.
    while (at < n) {
      if (this.id === undefined) {
        const found = scan.idLine(at);
        if (found === -1) break;
        at = idFrom = found;
      }
      const lineEnd = scan.lineBreak(at);
      const next = scan.nextLine(lineEnd);
      if (lineEnd === at) {
        // A blank line: the block ends. The text before its id line first, so that only
        // this block's blank line can dispatch while the rest of it is parsed.
        if (idFrom > fed) this.handOn(text, fed, idFrom);
        this.dispatched = false;
        this.handOn(text, idFrom, next);
        fed = next;
        const id = this.id!;
        this.id = undefined;
        if (!this.dispatched) this.onIdOnly(id);
      } else {
        const value = idValue(text, at, lineEnd);
        if (value !== undefined) this.id = value;
      }
      at = next;
    }
    if (fed < n) this.parse(fed === 0 ? text : text.slice(fed));
  }

  /**
   * Hands `text[from, to)` on, `to` a line start: a lone CR that ends it goes as CR LF (the
   * same line break), else eventsource-parser would hold that last line until the next text.
   */
  private handOn(text: string, from: number, to: number): void {
    const piece = text.slice(from, to);
    this.parse(text.charCodeAt(to - 1) === CR ? piece + '\n' : piece);
  }
}

/** Whether an id line may start in `text` (at its start, or after a CR or LF): conservative. */
function mayHoldIdLine(text: string): boolean {
  return isIdLine(text, 0) || text.indexOf('\nid') !== -1 || text.indexOf('\rid') !== -1;
}

/**
 * Line breaks and id lines of one text, each search moving forward only (one pass over the
 * text per kind, however many lines are asked about).
 */
class LineScan {
  private lf = -2;
  private cr = -2;
  private lfId = -2;
  private crId = -2;

  constructor(private readonly text: string) {}

  /** The offset of the first CR or LF at or after `from`, or the text's length. */
  lineBreak(from: number): number {
    const text = this.text;
    if (this.lf !== -1 && this.lf < from) this.lf = text.indexOf('\n', from);
    if (this.cr !== -1 && this.cr < from) this.cr = text.indexOf('\r', from);
    const { lf, cr } = this;
    if (lf === -1) return cr === -1 ? text.length : cr;
    return cr === -1 || lf < cr ? lf : cr;
  }

  /** The start of the line after the line break at `lineEnd` (CR LF is one break), or the text's length. */
  nextLine(lineEnd: number): number {
    const text = this.text;
    if (lineEnd >= text.length) return text.length;
    return lineEnd + (text.charCodeAt(lineEnd) === CR && text.charCodeAt(lineEnd + 1) === LF ? 2 : 1);
  }

  /** The start of the first id line at or after the line start `from`, or -1. */
  idLine(from: number): number {
    const text = this.text;
    if (isIdLine(text, from)) return from;
    for (;;) {
      if (this.lfId !== -1 && this.lfId < from) this.lfId = text.indexOf('\nid', from);
      if (this.crId !== -1 && this.crId < from) this.crId = text.indexOf('\rid', from);
      const { lfId, crId } = this;
      const found = lfId === -1 ? crId : crId === -1 ? lfId : Math.min(lfId, crId);
      if (found === -1) return -1;
      if (isIdLine(text, found + 1)) return found + 1;
      from = found + 1;
    }
  }
}

/** Whether the line starting at `at` is an id field: `id` alone or `id:` (any other name is another field). */
function isIdLine(text: string, at: number): boolean {
  if (text.charCodeAt(at) !== LOWER_I || text.charCodeAt(at + 1) !== LOWER_D) return false;
  const c = text.charCodeAt(at + 2);
  return c === COLON || c === LF || c === CR || at + 2 === text.length;
}

/**
 * The value of the id field on the line `text[start, end)` (after `id:` and one optional
 * space; `""` for the line `id`), or undefined when the line is no id field or its value holds
 * NUL (WHATWG HTML §9.2.6: then the field is ignored, as eventsource-parser does).
 */
function idValue(text: string, start: number, end: number): string | undefined {
  if (!isIdLine(text, start)) return undefined;
  const from = start + 2 === end ? end : start + 3 < end && text.charCodeAt(start + 3) === SPACE ? start + 4 : start + 3;
  const value = text.slice(from, end);
  return value.includes('\0') ? undefined : value;
}
