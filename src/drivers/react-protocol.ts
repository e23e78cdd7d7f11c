/**
 * The ReAct text protocol, for models without native tool calling. The model is told the format
 * and the tools in its system prompt and answers in plain text:
 *
 * ```
 * Thought: I need to add the numbers.
 * Action: add
 * Action Input: {"a": 2, "b": 3}
 * ```
 *
 * The driver runs the tool and shows its result as the next user message, `Observation: 5`;
 * the model goes on until it answers:
 *
 * ```
 * Thought: I know the answer.
 * Final Answer: 5
 * ```
 *
 * Labels are matched at the start of a line, ignoring case and surrounding spaces. One Action per
 * reply. Anything the model writes after an `Observation:` line of its own is ignored (it is
 * guessing a result it has not seen).
 */

/** A tool as the protocol describes it to the model. */
export interface ReActToolDescription {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/** What a reply asks for: a tool call, a final answer, or nothing we can act on (and why). */
export type ReActReply =
  | { readonly type: 'action'; readonly thought: string; readonly tool: string; readonly input: unknown }
  | { readonly type: 'final'; readonly thought: string; readonly answer: string }
  | { readonly type: 'invalid'; readonly reason: string };

/** The stop sequence that keeps a model from writing the observation itself. */
export const OBSERVATION_STOP = '\nObservation:';

/**
 * The protocol's instructions for the system prompt: the format, then each tool with its
 * description and input JSON Schema.
 *
 * @example
 * reactInstructions([{ name: 'add', description: 'Add two numbers', inputSchema: { type: 'object' } }]);
 */
export function reactInstructions(tools: readonly ReActToolDescription[]): string {
  const names = tools.map((t) => t.name).join(', ');
  const toolList = tools.length
    ? tools
        .map((t) =>
          [
            `- ${t.name}: ${t.description ?? '(no description)'}`,
            `  Input JSON Schema: ${JSON.stringify(t.inputSchema)}`,
          ].join('\n'),
        )
        .join('\n')
    : '(none: answer directly with a Final Answer)';
  return [
    'You solve the task step by step and can use tools. Reply in exactly this format:',
    '',
    'Thought: what you think about the next move',
    `Action: the name of one tool${tools.length ? `, one of [${names}]` : ''}`,
    "Action Input: the tool's input as one JSON object that matches its input JSON Schema",
    '',
    'Then stop and wait: the result comes back in the next message as "Observation: <result>".',
    'Repeat Thought / Action / Action Input as often as you need, one Action per reply.',
    'When you know the answer, reply with:',
    '',
    'Thought: I know the answer',
    'Final Answer: your answer to the user',
    '',
    'Tools:',
    toolList,
  ].join('\n');
}

/** What to tell the model when its reply could not be parsed. */
export function reactCorrection(reason: string): string {
  return (
    `Your last reply could not be used: ${reason}. ` +
    'Reply with "Thought:", "Action:" and "Action Input:" lines (the input as one JSON object) to use a tool, ' +
    'or with "Thought:" and "Final Answer:" lines to answer.'
  );
}

type Label = 'thought' | 'action' | 'action input' | 'final answer' | 'observation';
const LABEL = /^\s*(thought|action\s*input|action|final\s*answer|observation)\s*:\s?(.*)$/i;

/**
 * Parses a model's reply.
 *
 * @example
 * parseReActReply('Thought: add them\nAction: add\nAction Input: {"a": 2, "b": 3}');
 * // { type: 'action', thought: 'add them', tool: 'add', input: { a: 2, b: 3 } }
 * parseReActReply('Final Answer: 5'); // { type: 'final', thought: '', answer: '5' }
 */
export function parseReActReply(text: string): ReActReply {
  const sections: Array<{ label: Label | null; text: string }> = [{ label: null, text: '' }];
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    const match = LABEL.exec(line);
    if (match) {
      const label = (match[1] as string).toLowerCase().replace(/\s+/g, ' ') as Label;
      if (label === 'observation') break;
      sections.push({ label, text: match[2] ?? '' });
    } else {
      const last = sections[sections.length - 1] as { text: string };
      last.text = last.text === '' ? line : `${last.text}\n${line}`;
    }
  }
  const thought = sections
    .filter((s) => s.label === null || s.label === 'thought')
    .map((s) => s.text.trim())
    .filter(Boolean)
    .join('\n');
  const actions = sections.filter((s) => s.label === 'action');
  const finals = sections.filter((s) => s.label === 'final answer');

  if (actions.length && finals.length) {
    return invalid(
      'it has both an "Action:" and a "Final Answer:"; give one of them, and after an Action wait for its Observation',
    );
  }
  if (finals.length > 1) return invalid('it has more than one "Final Answer:"');
  if (finals.length === 1) {
    const answer = (finals[0] as { text: string }).text.trim();
    return answer ? { type: 'final', thought, answer } : invalid('its "Final Answer:" is empty');
  }
  if (actions.length > 1) return invalid('it has more than one "Action:"; use one Action per reply');
  if (actions.length === 0) return invalid('it has neither an "Action:" nor a "Final Answer:" line');

  const actionIndex = sections.findIndex((s) => s.label === 'action');
  const tool = toolName((sections[actionIndex] as { text: string }).text);
  if (!tool) return invalid('its "Action:" line names no tool');
  const inputSection = sections[actionIndex + 1];
  if (inputSection?.label !== 'action input') {
    return invalid(`"Action: ${tool}" is not followed by an "Action Input:" line with the tool's input`);
  }
  const inputText = stripFences(inputSection.text.trim());
  if (inputText === '') return invalid(`the "Action Input:" of ${tool} is empty; give a JSON object`);
  const input = parseJson(inputText);
  if (!input.ok) {
    return invalid(`the "Action Input:" of ${tool} is not valid JSON (${input.error}): ${inputText}`);
  }
  return { type: 'action', thought, tool, input: input.value };
}

function invalid(reason: string): ReActReply {
  return { type: 'invalid', reason };
}

/** `add`, "add", [add] and `add` are all the tool add: models copy the list's punctuation. */
function toolName(text: string): string {
  return (text.split('\n')[0] ?? '')
    .trim()
    .replace(/^[`'"[(]+|[`'"\])]+$/g, '')
    .trim();
}

/** Models often wrap the JSON in a Markdown code block. */
function stripFences(text: string): string {
  const fenced = /^```[a-zA-Z]*\s*\n?([\s\S]*?)\n?```\s*$/.exec(text);
  return fenced ? (fenced[1] as string).trim() : text;
}

type JsonResult = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * The input as JSON; when text follows the JSON (a model going on to its next Thought), the first
 * complete JSON object is taken. An own `__proto__` key is kept as data, as for native tool calls.
 */
function parseJson(text: string): JsonResult {
  const whole = tryParse(text);
  if (whole.ok) return whole;
  const object = firstJsonObject(text);
  if (object !== null) {
    const parsed = tryParse(object);
    if (parsed.ok) return parsed;
  }
  return whole;
}

function tryParse(text: string): JsonResult {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

/** The first balanced `{...}` of `text`, minding strings and escapes; null when there is none. */
function firstJsonObject(text: string): string | null {
  const start = text.indexOf('{');
  if (start < 0) return null;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  return null;
}
