import tseslint from 'typescript-eslint';

export default tseslint.config(
	{ ignores: ['node_modules/**', 'dist/**', 'out/**', 'test/fixtures/**', '.toolbelt-test/**', 'demo/**', 'bench/.data/**'] },
	...tseslint.configs.recommended,
	{
		rules: {
			'@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
			'@typescript-eslint/no-explicit-any': 'off',
			'@typescript-eslint/no-require-imports': 'off',
			curly: ['error', 'multi-line'],
			eqeqeq: ['error', 'always', { null: 'ignore' }],
		},
	},
	{
		// The pure layers run in the CLI, the unit tests and a future MCP server: they may
		// only use vscode's types, never its runtime module.
		files: ['src/core/**/*.ts', 'src/tools/**/*.ts', 'src/ui/**/*.ts', 'src/cli/**/*.ts'],
		rules: {
			'@typescript-eslint/no-restricted-imports': ['error', {
				paths: [{ name: 'vscode', message: 'src/core, src/tools and src/cli must not import vscode at runtime; use `import type` or go through ToolContext.', allowTypeImports: true }],
			}],
		},
	},
);
