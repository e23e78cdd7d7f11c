/**
 * A model call's passage through the budget ledger (`DriverContext.ledger`): its worst case
 * reserved on every scope of the run before it starts, the reservation's lease renewed while it
 * runs, and settled to its real usage after it (released when it failed).
 */
import type { LedgerAmount, LedgerRun } from '../ledger/budget-ledger';
import { LedgerLimitError } from '../ledger/ledger-limit-error';
import type { AgentState } from '../state/agent-state';
import { InvalidArgumentError } from '../state/errors';
import { stepEventIds } from '../state/loop-events';
import type { Usage } from '../state/usage';
import type { DriverContext } from './driver';
import type { CallableModel, CallOptions } from './language-model';
import type { PricingTable } from './model-call';

/** Tokens allowed per prompt message beyond its bytes (role and framing tokens). */
const MESSAGE_ALLOWANCE = 8;

/** A reservation held for one step's model call(s): settle it with the step's usage, or release it. */
interface LedgerHold {
  settle(usage: Usage): Promise<void>;
  release(): Promise<void>;
}

/**
 * The worst case of `call` on any of `models`: input tokens bounded by the UTF-8 bytes of the
 * prompt and tool definitions as JSON (a byte-level tokenizer never makes more tokens than bytes)
 * plus an allowance per message, and `maxOutputTokens`; cost at the dearest model's price. A
 * measure it cannot bound is null, with the reason.
 */
function worstCase(
  models: readonly CallableModel[],
  call: CallOptions,
  pricing: PricingTable | undefined,
): LedgerAmount & { readonly why: { cost?: InvalidArgumentError; tokens?: InvalidArgumentError } } {
  const output = call.maxOutputTokens;
  if (typeof output !== 'number') {
    const missing = new InvalidArgumentError(
      'modelOptions.callOptions.maxOutputTokens',
      "not set, and a scope of the run's budget ledger is capped: the worst case of a model call cannot be reserved without it",
    );
    return { cost: null, tokens: null, why: { cost: missing, tokens: missing } };
  }
  const input =
    Buffer.byteLength(JSON.stringify(call.prompt)) +
    (call.tools ? Buffer.byteLength(JSON.stringify(call.tools)) : 0) +
    MESSAGE_ALLOWANCE * call.prompt.length;
  let cost = 0;
  for (const model of models) {
    const price = pricing?.[model.modelId];
    if (!price)
      return {
        cost: null,
        tokens: input + output,
        why: {
          cost: new InvalidArgumentError(
            `modelOptions.pricing['${model.modelId}']`,
            "missing, and a scope of the run's budget ledger caps cost: the worst case of a call to this model cannot be priced",
          ),
        },
      };
    cost = Math.max(cost, (input * price.inputPerMillion + output * price.outputPerMillion) / 1_000_000);
  }
  return { cost, tokens: input + output, why: {} };
}

/**
 * Reserves the worst case of the step's model call on every scope of the run (none without a
 * ledger: null). A scope that cannot cover it throws LedgerLimitError (the run stops, no call
 * starts); one capped on a measure the call cannot bound throws InvalidArgumentError naming what
 * is missing. The key is the step's: retries and fallback models of the step share it; `suffix`
 * makes another call of the step its own (a summary call of its context window: `:summary<n>`).
 */
export async function reserveCall(
  models: readonly CallableModel[],
  call: CallOptions,
  state: AgentState,
  context: DriverContext,
  pricing: PricingTable | undefined,
  suffix = '',
): Promise<LedgerHold | null> {
  const run = context.ledger;
  if (!run || run.scopes.length === 0) return null;
  const ids = stepEventIds(state);
  const key = `${ids.agentId}:${ids.executionId}:${ids.stepNumber}${suffix}`;
  const amount = worstCase(models, call, pricing);
  const answer = await run.ledger.reserve(key, run.scopes, amount);
  if (answer.status === 'unbounded') throw amount.why[answer.measure];
  if (answer.status === 'refused') {
    const { scope, measure, spent, reserved, max } = answer;
    throw new LedgerLimitError({
      limit: 'ledger',
      scope,
      measure,
      spent,
      reserved,
      max,
      wanted: amount[measure] as number,
    });
  }
  const event = {
    agentId: ids.agentId,
    parentAgentId: ids.parentAgentId,
    executionId: ids.executionId,
    stepNumber: ids.stepNumber,
    key,
    scopes: run.scopes,
  };
  context.report({ type: 'ledger.reserved', ...event, cost: amount.cost, tokens: amount.tokens });
  return new Hold(run, key, (ended) => context.report({ type: 'ledger.settled', ...event, ...ended }));
}

class Hold implements LedgerHold {
  readonly #timer: ReturnType<typeof setInterval> | undefined;
  #leaseError: unknown;

  constructor(
    private readonly run: LedgerRun,
    private readonly key: string,
    private readonly ended: (end: {
      cost: number;
      tokens: number;
      released: boolean;
      leaseError?: string;
    }) => void,
  ) {
    const { leaseMs } = run.ledger;
    if (leaseMs === undefined) return;
    // renewed three times a lease: a process that dies stops renewing, and its hold ends with the lease
    this.#timer = setInterval(
      () => {
        run.ledger.renew(key).catch((error: unknown) => {
          this.#leaseError = error;
        });
      },
      Math.max(1, Math.floor(leaseMs / 3)),
    );
    this.#timer.unref?.();
  }

  async settle(usage: Usage): Promise<void> {
    clearInterval(this.#timer);
    const spent = { cost: usage.cost, tokens: usage.inputTokens + usage.outputTokens };
    await this.run.ledger.settle(this.key, this.run.scopes, spent);
    this.ended({ ...spent, released: false, ...this.#lease() });
  }

  /**
   * Releases the reservation of a call that failed. Never throws (the call's error is the one the
   * run records): a release that fails leaves the reservation to its lease, and says so in the
   * `ledger.settled` event's `leaseError`.
   */
  async release(): Promise<void> {
    clearInterval(this.#timer);
    try {
      await this.run.ledger.release(this.key);
    } catch (error) {
      this.#leaseError = new Error(
        `releasing the reservation failed (its lease ends it): ${(error as Error)?.message ?? String(error)}`,
      );
    }
    this.ended({ cost: 0, tokens: 0, released: true, ...this.#lease() });
  }

  #lease(): { leaseError?: string } {
    const error = this.#leaseError as Error | undefined;
    return error === undefined ? {} : { leaseError: error?.message ?? String(error) };
  }
}
