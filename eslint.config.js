import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { localPlugin } from './eslint-rules/no-import-cycle.js';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.vitals/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // No import cycles, type imports included (issue 14; eslint-rules/no-import-cycle.js says why it is local).
    files: ['**/*.ts'],
    plugins: { local: localPlugin },
    rules: { 'local/no-import-cycle': 'error' },
  },
  {
    // Isomorphic packages: no Node APIs (STYLE habit 6).
    files: [
      'packages/protocol/src/**/*.ts',
      'packages/engine/src/**/*.ts',
      'packages/sdk/src/core/**/*.ts',
      'packages/tracker/src/**/*.ts',
      'packages/capture/src/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['node:*', 'fs', 'path', 'crypto', 'buffer', 'stream'] }],
      'no-restricted-globals': ['error', 'Buffer', 'process', 'require', '__dirname'],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        performance: 'readonly',
      },
    },
  },
);
