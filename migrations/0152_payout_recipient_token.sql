-- Names that say one thing: payouts.recipient held the recipient's *token account*, which the instruction calls
-- `recipient_token` (the IDL's account name) and the code `recipientToken`. The column now says the same. The
-- merchant API keeps its `recipient` field (documented there as the recipient token account: a public contract),
-- as does the op account's on-chain `recipient` field (its layout and IDL are published). Data unchanged.
ALTER TABLE payouts RENAME COLUMN recipient TO recipient_token;
