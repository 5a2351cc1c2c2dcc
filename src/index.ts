// The library entry of `adcp-buyer-gateway`: a plain list of re-exports (ARCHITECTURE §2:
// `src/mcp/` is pure and is also the library surface).
export { VERSION, SDK_ID } from './version.js';

export {
  DEFAULT_MAX_TEXT_BYTES,
  extractAdcpResponse,
  extractAdcpError,
  findLiftableTextItem,
  findLiftableTextOrBound,
  parseTextObject,
  readTextObject,
  validateAdcpError,
} from './mcp/extract.js';
export type { TextObjectMatch } from './mcp/extract.js';
export { checkJsonBounds } from './mcp/json-bounds.js';
export type { JsonBoundsLimits, JsonBoundsResult } from './mcp/json-bounds.js';
export { jsonDeepEqual } from './mcp/deep-equal.js';
export { summarizeStructuredContent, SUMMARY_MAX_BYTES } from './mcp/summary.js';
export { normalizeToolResult } from './mcp/normalize.js';
export type { NormalizeOptions, NormalizeOutcome } from './mcp/normalize.js';
export {
  buildAdcpError,
  isNarrowableMethod,
  localErrorMessage,
  mayBeMutation,
  READ_ONLY_TOOL_PREFIXES,
  requestRefusal,
  toolErrorResult,
} from './mcp/local-error.js';
export type { BuildAdcpErrorInput, RefusalData } from './mcp/local-error.js';
export type {
  AdcpError,
  GatewayAdcpError,
  GatewayErrorDetails,
  JsonRpcErrorResponse,
  JsonRpcId,
  JsonRpcResultResponse,
  TextContent,
  TextBoundReason,
  TextJsonBounds,
  ToolErrorResult,
} from './mcp/types.js';

export { ADCP_CODES, NARROWABLE_METHODS, REASONS, REFUSALS } from './errors/codes.js';
export type {
  AdcpCode,
  AdcpCodeSpec,
  AdcpErrorReason,
  DetailField,
  ReasonSpec,
  Recovery,
  RefusalReason,
  RefusalSpec,
} from './errors/codes.js';

// The gateway itself, for embedding (tests, custom launchers): build, configure, listen.
export { buildApp } from './app.js';
export type { BuildAppOptions } from './app.js';
export { parseConfig, loadConfigFile, ConfigError } from './config/load.js';
export type { ConfigProblem } from './config/load.js';
export { resolveBatchLimits, resolveCallLimits } from './config/resolve.js';
export type { CallLimitSource } from './config/resolve.js';
export type { GatewayConfig, AgentConfig, Limits, DedupeTextMode } from './config/types.js';
