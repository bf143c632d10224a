export default {
  testEnvironment: 'node',
  transform: {},
  testMatch: ['<rootDir>/test/**/*.test.js'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/reliability/'],
  testTimeout: 60000,
  setupFiles: ['<rootDir>/test/helpers/isolate-cwd.js'],
};
