/**
 * Wire facts read from the fake's journal, and the tool the tests offer.
 * @module test/helpers/journal
 */

/** The host tool the tool turns offer. */
export const ECHO = {
  name: 'echo',
  description: 'Echoes its text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};

/** The fake's MCP `tools/call` answers, as it journaled them. */
export const toolCallAnswers = (fake) =>
  fake
    .journal()
    .flat()
    .filter((e) => e.kind === 'mcp_response' && e.method === 'tools/call');

/** The script expectations the fake found broken. */
export const brokenExpectations = (fake) =>
  fake
    .journal()
    .flat()
    .filter((e) => e.kind === 'expectation_failed' || e.kind === 'unmatched_prompt');

