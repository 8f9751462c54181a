// The package's ESM entry: the same module as the CommonJS one (dist/sdk/index.js), so `import` and `require`
// share one OncePay class and one OncepayError. Keep the names in step with sdk/index.ts (a test checks).
import sdk from '../dist/sdk/index.js';

export const {
  OncePay,
  readKeypairFile,
  deriveOperation,
  deriveOpId,
  refundPayoutId,
  FINDINGS,
  ONCEPAY_PROGRAM_ID,
  OncepayError,
  isOncepayError,
} = sdk;
export default sdk;
