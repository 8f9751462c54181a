// ESLint for the TypeScript tree: typescript-eslint's recommended rules, configured once.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Every eslint-disable comment names the rules it turns off and says why after ` -- `. ESLint's core has no rule
// for this (@eslint-community/eslint-plugin-eslint-comments has one); this check is small enough to keep here
// rather than add a dependency for it.
const DIRECTIVE = /^\s*eslint-disable(?:-line|-next-line)?(?=\s|$)/;
const NAMED_WITH_REASON = /^\s*eslint-disable(?:-line|-next-line)?\s+[@\w][^\s,]*(?:\s*,\s*[@\w][^\s,]*)*\s+--\s+\S/;
const oncepay = {
  rules: {
    'disable-needs-reason': {
      meta: {
        type: 'suggestion',
        docs: { description: 'eslint-disable comments name their rules and give a reason after " -- "' },
        schema: [],
        messages: { bare: 'eslint-disable must name the rule(s) and give a reason: `eslint-disable… <rule> -- <why>`' },
      },
      create(context) {
        return {
          Program() {
            for (const c of context.sourceCode.getAllComments()) {
              if (DIRECTIVE.test(c.value) && !NAMED_WITH_REASON.test(c.value)) {
                context.report({ loc: c.loc, messageId: 'bare' });
              }
            }
          },
        };
      },
    },
  },
};

export default tseslint.config(
  {
    ignores: ['dist/**', 'target/**', 'node_modules/**', '.oncepay/**', 'toolchain/sbf/build/**', 'idl/oncepay.ts'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { oncepay },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      'oncepay/disable-needs-reason': 'error',
    },
  },
  {
    // No function over ~120 lines (issue 31) outside tests and generated code: one that must be longer says why in
    // an eslint-disable line naming this rule.
    files: ['**/*.ts'],
    ignores: ['tests/**', '**/*.test.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 120, skipBlankLines: true, skipComments: true }] },
  },
  {
    // One error vocabulary: what the code throws is an OncepayError with a stable code (common/errors/codes.ts), so
    // isOncepayError sees it and a caller can branch on it. Tests, their kit and the script recording their golden
    // fixtures may throw plain errors.
    files: ['**/*.ts'],
    ignores: ['tests/**', 'testkit/**', 'scripts/record-golden.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'NewExpression[callee.name=/^(Error|RangeError|TypeError)$/]',
          message: 'Throw an OncepayError with a code from common/errors/codes.ts (add one if none fits).',
        },
        {
          selector: 'CallExpression[callee.name=/^(Error|RangeError|TypeError)$/]',
          message: 'Throw an OncepayError with a code from common/errors/codes.ts (add one if none fits).',
        },
      ],
    },
  },
  {
    // Plain CommonJS scripts run by Node (mocha's reporter): require/module are how they load and export.
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { process: 'readonly', console: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
