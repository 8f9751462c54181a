// Provider names in the webhook's URL: the pattern a name must match, and the label (metric label, cap bucket,
// turn in the checks) a name is counted under. A name a sender chose is never a label unless it is configured.

/** A provider name in the URL: the pattern the route accepts (anything else is 400 before the body). */
export const PROVIDER_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;
/** The metric label and cap bucket of every provider name that is not configured. */
export const UNKNOWN_PROVIDER = 'unknown';

/** The label of a provider name: itself when configured (`--provider`), `unknown` otherwise. */
export function providerLabeler(configured: readonly string[]): (provider: string) => string {
  const known = new Set(configured);
  return (provider) => (known.has(provider) ? provider : UNKNOWN_PROVIDER);
}
