import eslintComments from '@eslint-community/eslint-plugin-eslint-comments'
import tseslint from 'typescript-eslint'

/**
 * The layout rules of design.md, checked on every `npm run lint` (the module graph's cycles are checked beside,
 * by scripts/check-module-graph.ts). Test code (*.test.ts, *.test-helpers.ts) is exempt: a test reads rows
 * through repos and SQL to prove what a route did, and shares helpers across modules.
 */
const TEST_FILES = ['**/*.test.ts', '**/*.test-helpers.ts']

/**
 * Relative paths as written: `./` steps may stand anywhere among the `../` (`./../lists/x.js` is `../lists/x.js`),
 * and a file may be named by its `.ts` as well as its `.js` (tsconfig allows both). Every pattern below reads
 * them so, or a rule would be passed by spelling the path another way.
 */
const UP = '(\\./)*\\.\\./(\\./)*'
const EXT = '\\.[jt]s$'

/** design.md: `core/` knows nothing of modules. */
const CORE_TO_MODULES = '^(\\.\\.?/)+modules(/|$)'
const coreKnowsNoModule = {
  regex: CORE_TO_MODULES,
  message: 'core/ never imports src/modules (design.md, Layout): move the shared part down into core/.',
}
/** The same for `import()`, which no-restricted-imports does not read. */
const coreImportsNoModuleLater = {
  'no-restricted-syntax': [
    'error',
    {
      selector: `ImportExpression[source.value=/${CORE_TO_MODULES.replaceAll('/', '\\/')}/]`,
      message: coreKnowsNoModule.message,
    },
  ],
}

/**
 * A module imports another only through that module's index.ts, its public API; the modules' own index.ts
 * (the list app.ts and worker.ts wire) is above every module.
 */
const onlyThroughIndex = (exceptTables = false) => ({
  regex: exceptTables
    ? `^${UP}[^/.][^/]*/(?!index${EXT})(?![^/]+\\.table${EXT})`
    : `^${UP}[^/.][^/]*/(?!index${EXT})`,
  message: "Import another module only through its index.ts: '../<module>/index.js' (design.md, Layout).",
})
const notModulesRoot = [
  {
    regex: `^${UP}index${EXT}`,
    message: 'src/modules/index.ts lists every module, so importing it from one closes a cycle.',
  },
  {
    regex: '^(\\.\\.?/)*\\.\\./(\\.\\.?/)*\\.\\./(\\.\\.?/)*modules(/|$)',
    message: "Import another module as '../<module>/index.js'.",
  },
]

/**
 * A module's `<group>.module.ts` holds its registration (routes, queues, worker); only the module list,
 * src/modules/index.ts, imports it. Everything else imports the module's index.ts, which holds no routes.
 */
const moduleDefsOnlyInModuleList = {
  regex: `\\.module${EXT}`,
  message:
    'Only src/modules/index.ts imports a <group>.module.ts (its routes and worker); import the index.ts instead.',
}

/** design.md: routes never touch SQL. Routes call a service; the service calls the repo. */
const routesTouchNoSql = [
  {
    regex: `\\.(repo|table)${EXT}`,
    message: 'A route file calls a service, never a repo or a table: all SQL is in *.repo.ts (design.md).',
  },
  {
    regex: '^(drizzle-orm|pg|@electric-sql/pglite)(/.*)?$',
    message: 'Routes never touch SQL (design.md): put the query in a *.repo.ts, called from the service.',
  },
  {
    regex: `/core/db/sql${EXT}`,
    message: 'Routes never touch SQL (design.md): put the query in a *.repo.ts, called from the service.',
  },
]

/**
 * SQL is written in *.repo.ts (design.md), in the tables' *.table.ts, and in *.sql.ts: fragments that other
 * modules' repos compose (a segment's condition, a note over a message's coupon misses). Anywhere else in a
 * module, the query builders, the drivers (their subpaths and the pg add-ons included) and core's query helpers
 * are types only.
 */
const SQL_ELSEWHERE =
  'SQL is written in *.repo.ts (or a *.sql.ts fragment, a *.table.ts): call a repo function.'
const sqlOnlyInRepos = {
  '@typescript-eslint/no-restricted-imports': [
    'error',
    {
      paths: ['drizzle-orm', 'pg', 'postgres', '@electric-sql/pglite'].map((name) => ({
        name,
        allowTypeImports: true,
        message: SQL_ELSEWHERE,
      })),
      patterns: [
        {
          regex: `^(drizzle-orm|pg|@electric-sql/pglite)/|^pg-(cursor|copy-streams|query-stream|pool)$|/core/db/sql${EXT}`,
          allowTypeImports: true,
          message: SQL_ELSEWHERE,
        },
      ],
    },
  ],
}

/**
 * Nor does a service build a query through the database it is handed (`ctx.db.select()…`, `tx.execute(…)`,
 * `db.query.x.findMany()`), which needs no import to catch. Read by name, as ESLint sees no types: the
 * context's `db` and `dbHandle`, and the names the code gives a database or transaction (db, tx, ex).
 * Beginning a transaction (`.transaction()`) is the service's to do, and stays allowed.
 */
const QUERY_CALL = '/^(select|selectDistinct|selectDistinctOn|insert|update|delete|execute|query|\\$count)$/'
const HELD_DB = '/^(db|dbHandle)$/'
const DB_NAME = '/^(db|dbHandle|tx|ex)$/'
const noQueriesOutsideRepos = [
  `CallExpression[callee.property.name=${QUERY_CALL}][callee.object.property.name=${HELD_DB}]`,
  `CallExpression[callee.property.name=${QUERY_CALL}][callee.object.name=${DB_NAME}]`,
  `MemberExpression[property.name='query'][object.property.name=${HELD_DB}]`,
  `MemberExpression[property.name='query'][object.name=${DB_NAME}]`,
].map((selector) => ({ selector, message: SQL_ELSEWHERE }))

/** A route that reaches the database through its context skips the service as surely as one importing a repo. */
const routesUseNoDb = {
  'no-restricted-syntax': [
    'error',
    // This block replaces the one of every module file: the query calls are repeated.
    ...noQueriesOutsideRepos,
    // `ctx.db`, and `{ db }` taken out of a context.
    ...[
      'MemberExpression[property.name=/^(db|dbHandle)$/]',
      'ObjectPattern > Property[key.name=/^(db|dbHandle)$/]',
    ].map((selector) => ({
      selector,
      message:
        'Routes never touch the database (design.md): pass the context to a service, which calls the repo.',
    })),
  ],
}

/**
 * A drizzle query builder is a thenable that runs its statement at every `await` (and `execute`'s answer is
 * one too): a repo function that hands one back un-awaited gives its caller something that looks like a
 * promise, and a caller that keeps it to await twice runs the statement twice (the signal consumer once ran
 * a pipelines query per signal this way). Repo functions that return a builder's answer are `async`.
 */
const BUILDER_TAIL =
  '/^(from|where|orderBy|limit|offset|groupBy|having|innerJoin|leftJoin|values|set|returning|onConflictDoNothing|onConflictDoUpdate|execute)$/'
const builderNotReturnedRaw = {
  'no-restricted-syntax': [
    'error',
    ...[
      `FunctionDeclaration[async=false] > BlockStatement > ReturnStatement > CallExpression[callee.property.name=${BUILDER_TAIL}]`,
      `ArrowFunctionExpression[async=false] > CallExpression[callee.property.name=${BUILDER_TAIL}]`,
      `ArrowFunctionExpression[async=false] > BlockStatement > ReturnStatement > CallExpression[callee.property.name=${BUILDER_TAIL}]`,
    ].map((selector) => ({
      selector,
      message:
        "A repo function returns a query's rows, not drizzle's builder (a thenable that runs again at every await): make it async.",
    })),
  ],
}

const restrict = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns: patterns.flat() }] })

export default tseslint.config(
  { ignores: ['node_modules/', 'migrations/', 'data/', 'dist/', '.tmp/', 'bench/results/'] },
  ...tseslint.configs.recommended,
  {
    plugins: { '@eslint-community/eslint-comments': eslintComments },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      // A rule turned off says why after `--` (an `any` included: the brief allows none without a reason).
      '@eslint-community/eslint-comments/require-description': 'error',
    },
  },
  // Later blocks replace the rule's options of earlier ones for the files they match, so each repeats what holds.
  {
    files: ['**/*.ts'],
    ignores: ['src/modules/index.ts'],
    rules: restrict(moduleDefsOnlyInModuleList),
  },
  {
    files: ['src/core/**/*.ts'],
    ignores: TEST_FILES,
    rules: { ...restrict(coreKnowsNoModule, moduleDefsOnlyInModuleList), ...coreImportsNoModuleLater },
  },
  {
    files: ['src/modules/*/**/*.ts'],
    ignores: TEST_FILES,
    rules: restrict(onlyThroughIndex(), notModulesRoot, moduleDefsOnlyInModuleList),
  },
  // Drizzle tables name the tables their foreign keys point at, table file to table file: drizzle-kit loads the
  // table files alone, and an index.ts would pull routes and services into it (and into every table's cycle).
  {
    files: ['src/modules/*/*.table.ts'],
    ignores: TEST_FILES,
    rules: restrict(onlyThroughIndex(true), notModulesRoot, moduleDefsOnlyInModuleList),
  },
  {
    files: ['src/modules/**/*.ts'],
    ignores: [...TEST_FILES, '**/*.repo.ts', '**/*.table.ts', '**/*.sql.ts'],
    rules: { ...sqlOnlyInRepos, 'no-restricted-syntax': ['error', ...noQueriesOutsideRepos] },
  },
  {
    files: ['src/**/*.repo.ts'],
    rules: builderNotReturnedRaw,
  },
  {
    files: ['src/modules/**/*.routes.ts'],
    ignores: TEST_FILES,
    rules: {
      ...restrict(onlyThroughIndex(), notModulesRoot, routesTouchNoSql, moduleDefsOnlyInModuleList),
      ...routesUseNoDb,
    },
  },
)
