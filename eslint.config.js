import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['node_modules/', 'migrations/', 'data/', 'dist/', '.tmp/', 'bench/results/'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
)
