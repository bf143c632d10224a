// The floor of a warm run (#31): a plain Node walk of a tree, `readdir` of every folder and an
// `lstat` of every entry, nothing kept. bench:scale-cli times it in the same run as the CLI.
//
//   node test/bench/scale-walk.js <dir>

import fs from 'node:fs';

let files = 0;
const folders = [process.argv[2]];
while (folders.length > 0) {
  const dir = /** @type {string} */ (folders.pop());
  for (const name of fs.readdirSync(dir)) {
    const abs = `${dir}/${name}`;
    if (fs.lstatSync(abs).isDirectory()) folders.push(abs);
    else files++;
  }
}
console.log(files);
