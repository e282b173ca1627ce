/**
 * Wire facts read from the fake's journal, the tool the tests offer, and a scripted tool turn.
 * @module support/journal
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

/**
 * A fake turn that calls one host tool, checks its result, then says `text`.
 * @param {{prompt: string, tool: string, args: object, isError?: boolean, contains: string, text: string}} turn
 * @returns {object} the turn, in the fake's script format.
 */
export const callTurn = ({ prompt, tool, args, isError = false, contains, text }) => ({
  match: { prompt_contains: prompt },
  steps: [{ call: { tool, args } }, { expect_result: { is_error: isError, contains } }, { text }],
});
