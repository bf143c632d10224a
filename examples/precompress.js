// examples/precompress.js: compress dist/ from a script (what `precompressor dist` does)
import { precompress } from 'precompressor';

const report = await precompress('dist', { exclude: ['**/*.map'] });
for (const f of report.failures) console.error(`${f.path}: ${f.message}`);
console.log(`${report.files.compressed} compressed, ${report.files.unchanged} unchanged`);
process.exitCode = report.ok ? 0 : 1;
