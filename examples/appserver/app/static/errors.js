// Error wording for the page: what a person should read when something
// goes wrong, derived from the error code only.

// friendly turns an error body into something a person can act on. Only
// known codes get specific words; nothing from the body is shown raw.
export function friendly(status, err) {
  switch (err && err.code) {
    case 'login_required': return 'Your session has ended. Please log in again.';
    case 'upstream_unavailable': return 'The assistant service cannot be reached right now. Please try again in a moment.';
    case 'provider_error': return 'The assistant’s model failed to answer. Please try again.';
    case 'timeout': return 'The answer took too long and was stopped. Please try again.';
    case 'rate_limit_exceeded': return 'You are sending messages too quickly. Wait a few seconds and try again.';
    case 'unavailable': return 'The assistant is busy or restarting. Please try again shortly.';
    case 'run_failed': return 'The assistant could not produce a valid answer.';
    case 'run_waiting': return 'This answer needs an approval before it can continue.';
    case 'run_cancelled': return 'This answer was cancelled.';
    case 'invalid_api_key':
    case 'tenant_forbidden': return 'This site is not set up correctly to use the assistant. Please tell the site’s administrator.';
    case 'body_too_large': return 'The message is too long.';
    case 'not_found': return 'This conversation is no longer available. Start a new conversation.';
    case 'cross_origin': return 'The request was refused because it came from another site.';
  }
  if (status >= 500 || !status) return 'Something went wrong on the server. Please try again.';
  return 'The assistant could not accept this message.';
}

export async function errorOf(res) {
  try {
    const body = await res.json();
    return body && body.error;
  } catch {
    return null;
  }
}

// UserError carries a message fit to show as it is.
export class UserError extends Error {}
