import { pass } from '../compress/pass/precompress.js';
import { planPass } from '../compress/pass/plan-step.js';
import { finishOutputs } from '../compress/pass/outputs.js';

/**
 * Watch mode's whole pass: a pass that also says which files it found are symlinks (every
 * batch looks at them again: their targets' events do not name them; see batchPass()).
 * @param {string} root
 * @param {object} options
 * @param {{ has(rel: string): boolean }} holdOut
 * @param {import('../compress/pass/precompress.js').PassHooks} [hooks]
 */
export async function passWithLinks(root, options, holdOut, hooks = {}) {
  /** @type {string[]} */
  let links = [];
  const out = await pass(root, options, holdOut, hooks, {
    plan: async (ctx, hold) => {
      const planned = await planPass(ctx, hold);
      links = planned.links;
      return planned;
    },
    finish: finishOutputs,
  });
  return { ...out, links };
}
