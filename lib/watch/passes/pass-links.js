import { pass } from '../../compress/index.js';
import { planPass } from '../../compress/index.js';
import { finishOutputs } from '../../compress/index.js';

/**
 * Watch mode's whole pass: a pass that also says which files it found are symlinks (every
 * batch looks at them again: their targets' events do not name them; see batchPass()).
 * @param {string} root
 * @param {object} options
 * @param {{ has(rel: string): boolean }} holdOut
 * @param {import('../../compress/index.js').PassHooks} [hooks]
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
