/**
 * Program IDL in camelCase format in order to be used in JS/TS.
 *
 * Note that this is only a type helper and is not the actual IDL. The original
 * IDL can be found at `idl/oncepay.json` (`target/idl/` after `anchor build`).
 *
 * Generated from programs/oncepay by idl/gen; do not edit.
 */
export type Oncepay = {
  "address": "5EjQQXLjWwmaZXgrv8tnwG7Gqwwrdzvcn7KjL1eAySUj",
  "metadata": {
    "name": "oncepay",
    "version": "0.1.0",
    "spec": "0.1.0",
    "description": "Pays each payout operation id at most once"
  },
  "instructions": [
    {
      "name": "executePayout",
      "docs": [
        "Pays `amount` from a merchant vault to `recipient_token` at most once per (merchant, op_id)."
      ],
      "discriminator": [
        12,
        35,
        52,
        7,
        95,
        19,
        169,
        21
      ],
      "accounts": [
        {
          "name": "payoutAuthority",
          "docs": [
            "The merchant's payout authority."
          ],
          "signer": true,
          "relations": [
            "merchant"
          ]
        },
        {
          "name": "payer",
          "docs": [
            "Funds the operation account's rent."
          ],
          "writable": true,
          "signer": true
        },
        {
          "name": "merchant",
          "docs": [
            "Merchant config PDA [\"merchant\", merchant_authority]."
          ],
          "pda": {
            "seeds": [
              {
                "kind": "const",
                "value": [
                  109,
                  101,
                  114,
                  99,
                  104,
                  97,
                  110,
                  116
                ]
              },
              {
                "kind": "account",
                "path": "merchant.merchantAuthority",
                "account": "merchant"
              }
            ]
          }
        },
        {
          "name": "operation",
          "docs": [
            "Operation PDA [\"op\", merchant, op_id], created here."
          ],
          "writable": true,
          "pda": {
            "seeds": [
              {
                "kind": "const",
                "value": [
                  111,
                  112
                ]
              },
              {
                "kind": "account",
                "path": "merchant"
              },
              {
                "kind": "arg",
                "path": "opId"
              }
            ]
          }
        },
        {
          "name": "vault",
          "docs": [
            "Token account whose authority is the merchant PDA."
          ],
          "writable": true
        },
        {
          "name": "mint"
        },
        {
          "name": "recipientToken",
          "docs": [
            "Token account of `mint` that receives the payout."
          ],
          "writable": true
        },
        {
          "name": "tokenProgram",
          "docs": [
            "SPL Token or Token-2022."
          ]
        },
        {
          "name": "systemProgram",
          "address": "11111111111111111111111111111111"
        }
      ],
      "args": [
        {
          "name": "opId",
          "type": {
            "array": [
              "u8",
              32
            ]
          }
        },
        {
          "name": "amount",
          "type": "u64"
        },
        {
          "name": "opBump",
          "type": "u8"
        }
      ]
    },
    {
      "name": "initializeMerchant",
      "docs": [
        "Creates the merchant config PDA. Vaults are any token accounts whose authority is that PDA."
      ],
      "discriminator": [
        7,
        90,
        74,
        38,
        99,
        111,
        142,
        77
      ],
      "accounts": [
        {
          "name": "merchantAuthority",
          "signer": true
        },
        {
          "name": "payer",
          "writable": true,
          "signer": true
        },
        {
          "name": "merchant",
          "writable": true,
          "pda": {
            "seeds": [
              {
                "kind": "const",
                "value": [
                  109,
                  101,
                  114,
                  99,
                  104,
                  97,
                  110,
                  116
                ]
              },
              {
                "kind": "account",
                "path": "merchantAuthority"
              }
            ]
          }
        },
        {
          "name": "systemProgram",
          "address": "11111111111111111111111111111111"
        }
      ],
      "args": [
        {
          "name": "payoutAuthority",
          "type": "pubkey"
        },
        {
          "name": "merchantBump",
          "type": "u8"
        }
      ]
    },
    {
      "name": "setPaused",
      "docs": [
        "Stops or resumes payouts (merchant authority only)."
      ],
      "discriminator": [
        91,
        60,
        125,
        192,
        176,
        225,
        166,
        218
      ],
      "accounts": [
        {
          "name": "merchantAuthority",
          "signer": true,
          "relations": [
            "merchant"
          ]
        },
        {
          "name": "merchant",
          "writable": true,
          "pda": {
            "seeds": [
              {
                "kind": "const",
                "value": [
                  109,
                  101,
                  114,
                  99,
                  104,
                  97,
                  110,
                  116
                ]
              },
              {
                "kind": "account",
                "path": "merchant.merchantAuthority",
                "account": "merchant"
              }
            ]
          }
        }
      ],
      "args": [
        {
          "name": "paused",
          "type": "bool"
        }
      ]
    },
    {
      "name": "setPayoutAuthority",
      "docs": [
        "Replaces who may sign payouts (merchant authority only)."
      ],
      "discriminator": [
        112,
        100,
        95,
        230,
        10,
        85,
        156,
        69
      ],
      "accounts": [
        {
          "name": "merchantAuthority",
          "signer": true,
          "relations": [
            "merchant"
          ]
        },
        {
          "name": "merchant",
          "writable": true,
          "pda": {
            "seeds": [
              {
                "kind": "const",
                "value": [
                  109,
                  101,
                  114,
                  99,
                  104,
                  97,
                  110,
                  116
                ]
              },
              {
                "kind": "account",
                "path": "merchant.merchantAuthority",
                "account": "merchant"
              }
            ]
          }
        }
      ],
      "args": [
        {
          "name": "newPayoutAuthority",
          "type": "pubkey"
        }
      ]
    }
  ],
  "accounts": [
    {
      "name": "merchant",
      "discriminator": [
        71,
        235,
        30,
        40,
        231,
        21,
        32,
        64
      ]
    },
    {
      "name": "operation",
      "discriminator": [
        171,
        150,
        196,
        17,
        229,
        166,
        58,
        44
      ]
    }
  ],
  "events": [
    {
      "name": "payoutExecuted",
      "discriminator": [
        88,
        83,
        101,
        64,
        188,
        233,
        117,
        185
      ]
    }
  ],
  "errors": [
    {
      "code": 6000,
      "name": "operationAlreadyConsumed",
      "msg": "Operation already consumed: this op_id was paid out before"
    },
    {
      "code": 6001,
      "name": "unauthorized",
      "msg": "Signer is not the merchant's authority for this action"
    },
    {
      "code": 6002,
      "name": "merchantPaused",
      "msg": "Merchant is paused"
    },
    {
      "code": 6003,
      "name": "invalidAmount",
      "msg": "Amount must be greater than zero"
    },
    {
      "code": 6004,
      "name": "insufficientVaultBalance",
      "msg": "Vault balance is lower than the amount"
    },
    {
      "code": 6005,
      "name": "invalidMerchantAccount",
      "msg": "Merchant account is not an oncepay merchant config"
    },
    {
      "code": 6006,
      "name": "invalidVault",
      "msg": "Vault is not a token account owned by the merchant PDA"
    },
    {
      "code": 6007,
      "name": "mintMismatch",
      "msg": "Vault, recipient and mint do not share one mint"
    },
    {
      "code": 6008,
      "name": "invalidOperationAddress",
      "msg": "Operation account is not the PDA ['op', merchant, op_id]"
    },
    {
      "code": 6009,
      "name": "nonCanonicalBump",
      "msg": "Bump is not the canonical bump"
    },
    {
      "code": 6010,
      "name": "invalidTokenProgram",
      "msg": "Token program is not SPL Token or Token-2022, or does not own the token accounts"
    },
    {
      "code": 6011,
      "name": "missingSignature",
      "msg": "A required signature is missing"
    },
    {
      "code": 6012,
      "name": "accountNotWritable",
      "msg": "An account that must be writable is not"
    },
    {
      "code": 6013,
      "name": "invalidInstructionData",
      "msg": "Instruction data is malformed"
    },
    {
      "code": 6014,
      "name": "notEnoughAccountKeys",
      "msg": "Not enough accounts"
    },
    {
      "code": 6015,
      "name": "invalidSystemProgram",
      "msg": "System program account is not the System program"
    },
    {
      "code": 6016,
      "name": "invalidMint",
      "msg": "Mint account is not a token mint"
    },
    {
      "code": 6017,
      "name": "invalidRecipient",
      "msg": "Recipient is not a token account, or is the vault"
    },
    {
      "code": 6018,
      "name": "invalidMerchantAddress",
      "msg": "Merchant account is not the PDA ['merchant', merchant_authority]"
    },
    {
      "code": 6019,
      "name": "merchantAlreadyInitialized",
      "msg": "Merchant config already exists"
    },
    {
      "code": 6020,
      "name": "unsupportedRentSysvar",
      "msg": "Rent sysvar exemption threshold is not supported"
    },
    {
      "code": 6021,
      "name": "arithmeticOverflow",
      "msg": "Arithmetic overflow"
    }
  ],
  "types": [
    {
      "name": "merchant",
      "docs": [
        "Merchant config at PDA [\"merchant\", merchant_authority]."
      ],
      "type": {
        "kind": "struct",
        "fields": [
          {
            "name": "merchantAuthority",
            "type": "pubkey"
          },
          {
            "name": "payoutAuthority",
            "type": "pubkey"
          },
          {
            "name": "paused",
            "type": "bool"
          },
          {
            "name": "bump",
            "type": "u8"
          }
        ]
      }
    },
    {
      "name": "operation",
      "docs": [
        "Record of one executed payout at PDA [\"op\", merchant, op_id]; never closed."
      ],
      "type": {
        "kind": "struct",
        "fields": [
          {
            "name": "opId",
            "type": {
              "array": [
                "u8",
                32
              ]
            }
          },
          {
            "name": "merchant",
            "type": "pubkey"
          },
          {
            "name": "recipient",
            "type": "pubkey"
          },
          {
            "name": "mint",
            "type": "pubkey"
          },
          {
            "name": "amount",
            "type": "u64"
          },
          {
            "name": "slot",
            "type": "u64"
          },
          {
            "name": "bump",
            "type": "u8"
          }
        ]
      }
    },
    {
      "name": "payoutExecuted",
      "docs": [
        "Emitted by execute_payout."
      ],
      "type": {
        "kind": "struct",
        "fields": [
          {
            "name": "opId",
            "type": {
              "array": [
                "u8",
                32
              ]
            }
          },
          {
            "name": "merchant",
            "type": "pubkey"
          },
          {
            "name": "recipient",
            "type": "pubkey"
          },
          {
            "name": "mint",
            "type": "pubkey"
          },
          {
            "name": "amount",
            "type": "u64"
          },
          {
            "name": "slot",
            "type": "u64"
          }
        ]
      }
    }
  ]
};
