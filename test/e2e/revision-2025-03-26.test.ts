/**
 * MCP 2025-03-26 through the gateway: a real SDK 1.x client as a 2025-03-26 host, a real SDK 1.x
 * server as the seller. The matrix itself is test/support/sdk1/revision-suite.ts.
 */
import { describeRevision } from '../support/sdk1/revision-suite.js';

describeRevision('2025-03-26');
