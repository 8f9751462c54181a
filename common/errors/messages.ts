// What each error code means (one line per code, as @solana/kit keeps its messages.ts): the default message of an
// OncepayError thrown without one, and the reference for anyone branching on a code. Keyed by the code itself; the
// type requires exactly the codes of codes.ts, no more, no fewer.
import type { OncepayErrorCode } from './codes';

export const ONCEPAY_ERROR_MESSAGES: Readonly<Record<OncepayErrorCode, string>> = {
  // common
  ONCEPAY__COMMON__ABORTED: 'A wait was ended by its abort signal (a stop, a drain or a deadline), before its time.',
  // amount
  ONCEPAY__AMOUNT__MALFORMED:
    'An amount is not a decimal string of base units (no sign, decimals, exponent or leading zeros).',
  ONCEPAY__AMOUNT__OUT_OF_RANGE: 'An amount is above u64::MAX (18446744073709551615) or negative.',
  // payout
  ONCEPAY__PAYOUT__ID_MALFORMED: 'A payout id is not 1–200 bytes of UTF-8 without control characters.',
  ONCEPAY__PAYOUT__OP_ID_MALFORMED: 'An op id is not 64 lowercase hex characters (32 bytes).',
  ONCEPAY__PAYOUT__ADDRESS_MALFORMED: 'An address is not a base58 32-byte Solana address.',
  ONCEPAY__PAYOUT__SIGNATURE_MALFORMED: 'A transaction signature is not a base58 64-byte signature.',
  ONCEPAY__PAYOUT__NOT_FOUND: 'No payout with this id (for this merchant).',
  ONCEPAY__PAYOUT__MERCHANT_NOT_FOUND: 'No registered merchant with this id or name.',
  ONCEPAY__PAYOUT__LOCK_TIMEOUT: 'The payout is held by another worker for longer than the lock timeout.',
  ONCEPAY__PAYOUT__ABORTED: 'The payout was stopped by its abort signal; its journal says where it stands.',
  ONCEPAY__PAYOUT__OP_ACCOUNT_MALFORMED: "The account at the op PDA is not the program's operation account.",
  ONCEPAY__PAYOUT__KEYPAIR_MALFORMED: 'A keypair file cannot be read, or is not a JSON array of 64 bytes.',
  ONCEPAY__PAYOUT__OPTION_INVALID: 'A command-line or SDK option of a payout command is invalid.',
  ONCEPAY__PAYOUT__AMOUNT_ZERO: 'A payout amount must be at least 1 base unit.',
  ONCEPAY__PAYOUT__CHAIN_UNAVAILABLE:
    'The chain could not be reached for too many calls in a row; the journal keeps the payout resumable.',
  ONCEPAY__PAYOUT__SIGNER_UNAUTHORIZED:
    "The key is not the merchant's payout authority (refused on chain as Unauthorized, or seen before signing): nothing moved, the payout stays due.",
  ONCEPAY__PAYOUT__BUMP_INVALID: 'A PDA bump is not a u8 (0–255).',
  ONCEPAY__PAYOUT__CHAIN_CALL_FAILED:
    'One chain call of a payout run failed (timeout, 429, dropped connection): it decides nothing; the run looks again after a pause.',
  // api
  ONCEPAY__API__IDEMPOTENCY_RETENTION_TOO_SHORT: 'Idempotency keys must be kept at least 24 h.',
  ONCEPAY__API__IDEMPOTENCY_KEY_LOST:
    'An idempotency key was taken over by another session before its request could record the answer.',
  // invoice
  ONCEPAY__INVOICE__ID_MALFORMED: 'An invoice id is not 1–200 bytes of UTF-8 without control characters.',
  ONCEPAY__INVOICE__TEXT_INVALID:
    'A label, message or memo is too long (label 100, message 500, memo 500 characters) or has control characters.',
  ONCEPAY__INVOICE__EXPIRY_INVALID: 'An expiry is not an ISO 8601 time in the future.',
  ONCEPAY__INVOICE__RECEIVING_ADDRESS_MISSING:
    'The request names no recipient and the merchant has no receiving address configured.',
  ONCEPAY__INVOICE__MINT_NOT_FOUND: 'The mint is not a token mint on the chain (its decimals cannot be read).',
  ONCEPAY__INVOICE__ID_EXISTS: 'An invoice with this invoice id already exists for this merchant (other terms).',
  ONCEPAY__INVOICE__NOT_FOUND: 'No invoice with this id for this merchant.',
  ONCEPAY__INVOICE__CURSOR_MALFORMED: 'A list cursor is not one this API returned.',
  ONCEPAY__INVOICE__FILTER_INVALID: 'A list filter (status, created range, limit) is invalid.',
  ONCEPAY__INVOICE__EXPIRED: 'The invoice expired before it was paid.',
  ONCEPAY__INVOICE__ABORTED: 'Waiting for the payment was stopped by its abort signal.',
  // merchant
  ONCEPAY__MERCHANT__ACCOUNT_MALFORMED:
    'The account at the merchant PDA is not an oncepay merchant config (wrong owner, size or discriminator).',
  ONCEPAY__MERCHANT__NOT_INITIALIZED:
    'No merchant config exists at the PDA of this authority: run `oncepay merchant init` first.',
  ONCEPAY__MERCHANT__TRANSACTION_FAILED:
    "A transaction landed with an error (the program's named error is in the message).",
  ONCEPAY__MERCHANT__TRANSACTION_EXPIRED:
    'A transaction was not seen confirmed before its blockhash expired (nothing changed on-chain).',
  ONCEPAY__MERCHANT__AUTHORITY_MISMATCH: 'The signer is not the merchant authority stored in the config.',
  // keypair
  ONCEPAY__KEYPAIR__PERMISSIONS_TOO_OPEN: 'A keypair file is readable by group or others (chmod 600 it).',
  // vault
  ONCEPAY__VAULT__MINT_INVALID: 'The mint address holds no account, or an account that no token program owns.',
  ONCEPAY__VAULT__NOT_FOUND: 'The vault address holds no account.',
  ONCEPAY__VAULT__NOT_TOKEN_ACCOUNT: 'The vault address holds an account that is not a token account.',
  // exception
  ONCEPAY__EXCEPTION__NOT_FOUND: 'No exception with this id.',
  ONCEPAY__EXCEPTION__ALREADY_RESOLVED: 'The exception was closed with `exception resolve`: it will not be refunded.',
  ONCEPAY__EXCEPTION__ALREADY_REFUNDED:
    'The exception already has a refund payout (resolve refuses; refund reports it).',
  ONCEPAY__EXCEPTION__REFUND_TERMS_DIFFER:
    'A refund exists for this receipt with other terms (another --to): the first one stands, nothing is paid twice.',
  ONCEPAY__EXCEPTION__REFUND_UNSUPPORTED: 'Native SOL or an unknown mint: the payout program moves SPL tokens only.',
  ONCEPAY__EXCEPTION__MERCHANT_UNKNOWN:
    'No registered merchant holds the vault the money went to: name one with --merchant.',
  ONCEPAY__EXCEPTION__NOTE_MISSING: '`resolve` needs a non-empty note saying why.',
  ONCEPAY__EXCEPTION__KIND_INVALID: '`--kind` is not an exception kind.',
  ONCEPAY__EXCEPTION__RECEIPT_KEY_INVALID:
    "refundPayoutId's receipt is not a receipt key (cluster, signature, ixIndex ≥ 0, innerIndex ≥ -1).",
  // sdk
  ONCEPAY__SDK__RPC_MISSING: 'An on-chain call on an OncePay made without rpcUrl / connection.',
  ONCEPAY__SDK__ARGUMENT_INVALID:
    'An OncePay method argument is not of the type or in the range it takes (context.field names it; nothing ran).',
  // decode
  ONCEPAY__DECODE__MALFORMED_JSON: 'Input text is not JSON / JSON lines; context has line, column, position.',
  ONCEPAY__DECODE__RPC_ERROR: 'An RPC envelope carried `error` instead of `result`.',
  ONCEPAY__DECODE__TRANSACTION_NOT_FOUND:
    'An RPC envelope carried `result: null` (transaction not found / not yet confirmed).',
  ONCEPAY__DECODE__MALFORMED_TRANSACTION: 'A transaction object lacks or mistypes a field the decoder needs.',
  ONCEPAY__DECODE__MISSING_META: '`meta` is null: success or failure cannot be told, so nothing may be credited.',
  ONCEPAY__DECODE__UNSUPPORTED_VERSION: '`version` is neither absent, "legacy" nor 0.',
  ONCEPAY__DECODE__UNSUPPORTED_ENCODING:
    '`transaction` is in an encoding other than json, jsonParsed, base64 or base58.',
  ONCEPAY__DECODE__MALFORMED_INSTRUCTION: "A transfer instruction's data or accounts do not fit its layout.",
  ONCEPAY__DECODE__AMOUNT_OUT_OF_RANGE:
    'An amount is negative, above u64::MAX, not an integer, or a fee exceeds its amount.',
  ONCEPAY__DECODE__AMOUNT_IMPRECISE: 'A JSON number amount above 2^53 − 1 reached us already rounded by JSON.parse.',
  ONCEPAY__DECODE__MALFORMED_BLOCK:
    'A getBlock result has no `transactions` array (e.g. fetched with transactionDetails other than "full").',
  ONCEPAY__DECODE__BALANCE_MISMATCH:
    "A decoded token transfer disagrees with the transaction's own pre/post token balances (balance-check.ts).",
  // ledger
  ONCEPAY__LEDGER__INVALID_RECEIPT:
    'A receipt lacks a field, or a field is out of range (amount above u64, negative index…); it is skipped.',
  ONCEPAY__LEDGER__INVALID_SOURCE: '`source` is not one of scanner | backfill | webhook | file.',
  ONCEPAY__LEDGER__INVALID_CLUSTER: '`cluster` is empty.',
  ONCEPAY__LEDGER__INVALID_INVOICE:
    "An invoice's fields are malformed (amount not a positive u64, neither deposit address nor reference…).",
  ONCEPAY__LEDGER__INVOICE_CONFLICT: 'An invoice with this id (or reference key) already exists with different fields.',
  ONCEPAY__LEDGER__INVALID_CHECKPOINT: 'A checkpoint slot is not a non-negative integer.',
  ONCEPAY__LEDGER__SCHEMA_MISSING:
    "The ledger's tables are not in the database (or schema): run `oncepay migrate` first.",
  ONCEPAY__LEDGER__PIPELINE_BROKEN:
    'An earlier batch of the same ledger pipeline failed, so this one was not applied (nor any after it): a checkpoint never passes a batch that did not commit. Start again from the checkpoint.',
  // outbox
  ONCEPAY__OUTBOX__NO_TARGET:
    'No webhook URL for the merchant (no webhook_endpoints row and no --url). The attempt fails and is retried.',
  ONCEPAY__OUTBOX__NO_SECRET:
    'No HMAC secret for the merchant (no webhook_endpoints row and no --secret / ONCEPAY_WEBHOOK_SECRET).',
  ONCEPAY__OUTBOX__NOT_DEAD: '`outbox replay` named a row that does not exist or is not dead.',
  ONCEPAY__OUTBOX__DEAD_LETTER:
    'Logged when a row used its last attempt and became a dead letter (`outbox replay` re-queues it).',
  ONCEPAY__OUTBOX__INVALID_OPTION: 'A worker option is out of range.',
  // rpc
  ONCEPAY__RPC__HTTP_STATUS: 'The RPC endpoint answered with an HTTP error status.',
  ONCEPAY__RPC__TIMEOUT: 'An RPC call did not answer within its timeout.',
  ONCEPAY__RPC__NETWORK: 'An RPC call failed in the network (connection refused, reset, DNS).',
  ONCEPAY__RPC__MALFORMED_RESPONSE: 'An RPC answer is not a JSON-RPC response.',
  ONCEPAY__RPC__ERROR_RESPONSE: 'The RPC server answered with a JSON-RPC error.',
  ONCEPAY__RPC__RETRIES_EXHAUSTED: 'An RPC call failed on every retry.',
  ONCEPAY__RPC__ABORTED: 'An RPC call was aborted by its caller.',
  ONCEPAY__RPC__INVALID_ENDPOINT: 'The RPC endpoint is not an http(s) URL.',
  ONCEPAY__RPC__BATCH_TOO_LARGE: 'A batched RPC call was asked for more items than the method takes in one call.',
  // source
  ONCEPAY__SOURCE__BLOCK_UNDECODABLE:
    'A block the node returned could not be decoded: the checkpoint stops before its slot.',
  ONCEPAY__SOURCE__BLOCK_NOT_AVAILABLE:
    'The node cannot serve a block (yet): the checkpoint stops before its slot, the next pass retries.',
  ONCEPAY__SOURCE__BLOCK_FETCH_FAILED: 'Fetching a block failed after every retry.',
  ONCEPAY__SOURCE__INVALID_OPTION: 'A CLI option has an invalid value.',
  ONCEPAY__SOURCE__COMMITMENT_UNSUPPORTED:
    'A commitment the command does not offer (backfill and the webhook credit finalized transactions only).',
  ONCEPAY__SOURCE__BACKFILL_INCOMPLETE:
    'Backfill finished with slots it could not process (listed in the error context).',
  ONCEPAY__SOURCE__INVALID_CHECKPOINT: 'A checkpoint slot read back is not a non-negative safe integer.',
  ONCEPAY__SOURCE__WS_REQUEST_REFUSED: 'The node answered a websocket request (a subscription) with a JSON-RPC error.',
  ONCEPAY__SOURCE__WS_CLOSED: 'The node closed the websocket (or it closed while connecting); the session reconnects.',
  ONCEPAY__SOURCE__WS_IDLE:
    'The websocket went silent (no message, no pong) past the idle timeout; the session reconnects.',
  ONCEPAY__SOURCE__STREAM_IDLE: 'The gRPC stream went silent (no message, not even a ping) past the idle timeout.',
  ONCEPAY__SOURCE__STREAM_ENDED: 'The gRPC server ended the stream; the source reconnects.',
  ONCEPAY__SOURCE__STOPPED: 'A source session was stopped (or ended) before its work finished.',
  ONCEPAY__SOURCE__HINT_STEP_INVALID:
    'A webhook hint step credits from a status alone (only a transaction credits): a bug.',
  // webhook
  ONCEPAY__WEBHOOK__UNAUTHORIZED: 'Missing or wrong webhook credentials.',
  ONCEPAY__WEBHOOK__BODY_TOO_LARGE: 'The delivery body is larger than the receiver accepts.',
  ONCEPAY__WEBHOOK__MALFORMED_JSON: 'The delivery body is not JSON.',
  ONCEPAY__WEBHOOK__UNSUPPORTED_SHAPE: 'The delivery body is JSON of a shape no provider sends.',
  ONCEPAY__WEBHOOK__MALFORMED_TRANSACTION: 'A delivered transaction item cannot be decoded, or names no signature.',
  ONCEPAY__WEBHOOK__RECEIPT_REJECTED:
    "The ledger refused a receipt decoded from an item (its code is in the dead letter's detail).",
  ONCEPAY__WEBHOOK__INVALID_EVENT_ID: 'The event id is not 1–200 printable ASCII characters.',
  ONCEPAY__WEBHOOK__UNSUPPORTED_MEDIA_TYPE: 'The request has a content type the receiver does not take.',
  ONCEPAY__WEBHOOK__NOT_FOUND: 'No such route on the webhook receiver.',
  ONCEPAY__WEBHOOK__INVALID_REQUEST: 'The request does not match the route (provider name, headers).',
  ONCEPAY__WEBHOOK__INTERNAL: 'The receiver failed; the delivery may be retried.',
  ONCEPAY__WEBHOOK__TIMESTAMP_OUTSIDE_WINDOW:
    'A genuine signature whose `t=` is outside the tolerance window: a replayed (or badly clocked) delivery.',
  ONCEPAY__WEBHOOK__BALANCE_MISMATCH:
    'A transaction whose decoded transfers disagree with its own token balances (ONCEPAY__DECODE__BALANCE_MISMATCH).',
  ONCEPAY__WEBHOOK__CHAIN_TRANSACTION_REFUSED:
    "The chain's own answer for a signature a delivery named could not be decoded (dead letter origin 'chain').",
  ONCEPAY__WEBHOOK__HINTS_OVER_CAPACITY:
    "A provider's pending signatures are at their cap (--max-pending-hints): 429 with Retry-After, nothing stored.",
  // localnet
  ONCEPAY__LOCALNET__MALFORMED_TRANSACTION: 'The transaction bytes are not a Solana wire transaction.',
  ONCEPAY__LOCALNET__LOOKUP_TABLE_NOT_FOUND:
    'An address lookup table the v0 transaction names is missing or not a lookup table.',
  ONCEPAY__LOCALNET__LEDGER_CORRUPT: 'The ledger folder holds data this version cannot read.',
  ONCEPAY__LOCALNET__PROGRAM_LOAD_FAILED: 'A program file given with --program cannot be loaded.',
  ONCEPAY__LOCALNET__INVALID_OPTION: 'A command-line or handle option is out of range.',
  ONCEPAY__LOCALNET__TOKEN_PROGRAM_MISSING:
    'The legacy SPL Token program (spl_token-3.5.0.so) is missing or not the expected file; run make setup.',
  ONCEPAY__LOCALNET__GEYSER_REQUEST_MALFORMED:
    'A Geyser subscribe request is not valid protobuf (truncated, unknown wire type).',
  ONCEPAY__LOCALNET__GEYSER_UNSUPPORTED:
    'The localnet Geyser cannot encode this (a transaction error it does not know, a grpc-js change).',
  // db
  ONCEPAY__DB__POSTGRES_MISSING: "No PostgreSQL server binaries: `make setup` installs Debian's `postgresql`.",
  ONCEPAY__DB__POSTGRES_FAILED: 'initdb, pg_ctl or psql failed; the message has their output.',
  ONCEPAY__DB__PORT_IN_USE:
    "The embedded PostgreSQL could not listen: its port is taken (another checkout's server, or another PostgreSQL).",
  ONCEPAY__DB__PASSWORD_MISSING:
    'The data folder has a cluster but no usable password file, and it cannot be recovered here.',
  ONCEPAY__DB__PASSWORD_FILE_EXPOSED: 'The password file can be read by others than its owner.',
  ONCEPAY__DB__MIGRATION_DUPLICATE_VERSION: 'Two migration files carry the same version number.',
  ONCEPAY__DB__MIGRATION_EDITED: 'An applied migration file was changed afterwards (applied files are never edited).',
  ONCEPAY__DB__MIGRATION_FAILED: 'A migration failed; its transaction was rolled back.',
  ONCEPAY__DB__INVALID_IDENTIFIER: 'A schema name is not a plain lower-case SQL identifier.',
  ONCEPAY__DB__CONNINFO_MALFORMED: 'The database URL is not a libpq connection string (URL or key=value pairs).',
  ONCEPAY__DB__CONNINFO_UNSUPPORTED:
    'The database URL asks for something the pool does not honour (the message names the parameter and value).',
  ONCEPAY__DB__HA_FAILED: 'A pg_autoctl step of `oncepay db ha` failed; the message has its output.',
  ONCEPAY__DB__HA_OUTPUT_MALFORMED: 'pg_autoctl printed something other than the state or URL asked for.',
  ONCEPAY__DB__HOSTS_MISSING: 'A multi-host database URL names no host.',
  // program_binary
  ONCEPAY__PROGRAM__UNKNOWN_BINARY: 'A program binary name that is neither the Anchor program nor the lean twin.',
  ONCEPAY__PROGRAM__BINARY_MISSING: 'The chosen program binary is not built (run make program).',
  // cli
  ONCEPAY__CLI__USAGE:
    'The command line was refused before anything ran: an unknown option or command, or a required option or argument missing.',
  ONCEPAY__CLI__VALUE_INVALID:
    "A flag's or argument's value is not of the form it takes (the message names the flag); nothing ran.",
  // demo
  ONCEPAY__DEMO__PROGRAM_MISSING: 'The demo needs the compiled program (run make program).',
  ONCEPAY__DEMO__TRANSACTION_FAILED: 'A transaction the demo sent failed.',
  ONCEPAY__DEMO__TIMEOUT: 'Something the demo waits for did not happen in time.',
  ONCEPAY__DEMO__CHILD_FAILED: 'A component process the demo started exited with an error.',
  ONCEPAY__DEMO__UNEXPECTED_ANSWER: 'A component answered the demo with something other than expected.',
  ONCEPAY__DEMO__INVARIANT_BROKEN: "A check of the demo's story failed (e.g. a payout paid twice).",
  // console
  ONCEPAY__CONSOLE__OPERATOR_NAME_INVALID:
    'An operator name is not 1–64 of a-z 0-9 . _ - (starting with a letter or digit).',
  ONCEPAY__CONSOLE__OPERATOR_EXISTS: 'An operator with this name exists (use --reset to set a new password).',
  ONCEPAY__CONSOLE__OPERATOR_NOT_FOUND: 'No operator with this name.',
  ONCEPAY__CONSOLE__PASSWORD_TOO_SHORT: 'An operator password is shorter than 12 characters.',
  ONCEPAY__CONSOLE__LOGIN_FAILED: 'A console login named an unknown operator or a wrong password.',
  ONCEPAY__CONSOLE__LOGIN_THROTTLED:
    'Console logins are refused for now: too many attempts (per operator or in total).',
  ONCEPAY__CONSOLE__CSRF_REJECTED:
    "A console form came without its session's token or from another origin; nothing changed.",
  ONCEPAY__CONSOLE__CURSOR_INVALID: 'A console page cursor is not a row id.',
  ONCEPAY__CONSOLE__OUTSIDE_SESSION:
    'A console page was reached outside the session-checked context (a bug of the route registration).',
  // idl
  ONCEPAY__IDL__ERROR_UNKNOWN:
    'The IDL (idl/oncepay.json) names no program error of that name: the client and the IDL disagree.',
  ONCEPAY__IDL__INSTRUCTION_UNKNOWN:
    'The IDL has no instruction of that name (or one of a shape the client does not build).',
  ONCEPAY__IDL__ACCOUNT_MISSING: 'An instruction was built without an account its IDL lists.',
  // process
  ONCEPAY__PROCESS__STOPPED_BY_SIGNAL: 'The process got SIGTERM or SIGINT: its work is aborted after the current step.',
  // sim
  ONCEPAY__SIM__OPTION_INVALID: 'A simulation option (a seed, a count) is not of the form it takes.',
  ONCEPAY__SIM__MUTANT_UNKNOWN: 'No mutant of that name in sim/mutants.ts.',
  ONCEPAY__SIM__EVIDENCE_MISSING: 'The chain could not show a block the chaos evidence needs.',
  ONCEPAY__SIM__ACTION_INVALID: 'A simulated worker was handed an action it does not take (a bug of the simulation).',
  // bench
  ONCEPAY__BENCH__SETUP_FAILED: 'A benchmark could not start what it measures (a process, a toolchain, a program).',
  ONCEPAY__BENCH__CHECK_FAILED:
    'A benchmark run did not do what it measures (a payout failed, a count differs): no figure.',
};
