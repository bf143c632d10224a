// The slow reliability suite (crashes, faults, hostile input, load): `npm run test:reliability`.
export default {
  rootDir: '../..',
  testEnvironment: 'node',
  transform: {},
  testMatch: ['<rootDir>/test/reliability/**/*.test.js'],
  testTimeout: 15 * 60 * 1000,
  maxWorkers: 1,
  setupFiles: ['<rootDir>/test/helpers/isolate-cwd.js'],
};
