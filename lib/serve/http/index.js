// The http room's door: a request's path, negotiation, conditionals, replies without a file, the
// decisions' vocabulary and the server's options.

export { evaluatePreconditions, evaluateRange, unconditional } from './conditional.js';
/** @typedef {import('./decision.js').Decision} Decision */
/** @typedef {import('./decision.js').FileRange} FileRange */
/** @typedef {import('./decision.js').Reply} Reply */
/** @typedef {import('./decision.js').RequestInfo} RequestInfo */
/** @typedef {import('./decision.js').ResponseHeaders} ResponseHeaders */
export { acceptsHtml, createNegotiator } from './negotiate.js';
export { PREVIEW_LIMITS, SERVE_DEFAULTS, normalizeServeOptions, previewLimits } from './options.js';
/** @typedef {import('./options.js').ServeOptions} ServeOptions */
/** @typedef {import('./options.js').SetHeaders} SetHeaders */
export { httpError, methodNotAllowed, redirectReply, statusReply } from './replies.js';
export { folderRedirectLocation, parseRequestPath, splitUrl } from './request-path.js';
/** @typedef {import('./request-path.js').PathOk} PathOk */
export { SiteLink, linkedHead, placeOf } from './site-link.js';
