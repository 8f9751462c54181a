-- Operators of the console (/console/): people who run the deployment, not merchants (merchants call the API with
-- their own keys, api_merchants). A password is kept only as a scrypt hash (its parameters and salt in the text,
-- app/console/password.ts). failed_logins / locked_until throttle guessing per operator; a name that is not here
-- gets no row, so a stranger's attempts never grow this table.
CREATE TABLE operators (
  id            bigserial PRIMARY KEY,
  name          text NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
  password_hash text NOT NULL,
  failed_logins integer NOT NULL DEFAULT 0 CHECK (failed_logins >= 0),
  locked_until  timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now()
);

-- A console session: the cookie carries a random id, this table only its sha256 (a database read does not hand out
-- sessions). csrf_token is the synchronizer token every POST form carries. A session ends at expires_at (absolute)
-- or once last_seen_at is older than the idle limit; logout deletes the row.
CREATE TABLE operator_sessions (
  id_hash      bytea PRIMARY KEY CHECK (length(id_hash) = 32),
  operator_id  bigint NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  csrf_token   text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL
);
CREATE INDEX operator_sessions_expires_idx ON operator_sessions (expires_at);
