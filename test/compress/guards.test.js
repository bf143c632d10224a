import fs from 'node:fs/promises';
import fsSync from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { precompress } from '../../lib/compress/pass/precompress.js';
import { systemDirReason } from '../../lib/compress/plan/guards.js';
import { fileURLToPath } from 'node:url';
import { tempDir, writeTree, textOf } from '../helpers/tmp.js';
import { runCommand } from '../helpers/spawn.js';

const BIN = fileURLToPath(new URL('../../bin/precompressor.js', import.meta.url));

// Guards against a run that would harm what is not a build output: a --manifest path naming
// another file (#17, item 3) and a system or home folder given as the folder to compress (item 6).

let root;
beforeEach(async () => {
  root = await tempDir('pc-guards-');
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const SITE = { 'index.html': `<!doctype html>${textOf(3000)}`, 'app.js': textOf(9000, 2) };

describe('--manifest never replaces a file that is not a manifest of ours', () => {
  test.each([
    ['the site\'s own page', 'index.html'],
    ['a user\'s text file', 'notes.txt'],
    ['an empty file', 'empty.json'],
  ])('%s is refused and left as it was', async (_label, name) => {
    await writeTree(root, { ...SITE, 'notes.txt': 'my notes\n', 'empty.json': '' });
    const before = await fs.readFile(path.join(root, name));
    await expect(precompress(root, { manifest: name })).rejects.toMatchObject({
      code: 'ERR_PRECOMPRESSOR_MANIFEST',
      message: expect.stringMatching(/not a precompressor manifest.*options\.manifest/),
    });
    expect(await fs.readFile(path.join(root, name))).toEqual(before);
    expect((await fs.readdir(root)).filter((n) => n.endsWith('.br'))).toEqual([]); // refused before any work
  });

  test('a symlink, a FIFO and a character device are refused (and the FIFO does not hang the run)', async () => {
    await writeTree(root, { ...SITE, 'target.json': '{"mine":true}' });
    await fs.symlink('target.json', path.join(root, 'link.json'));
    execFileSync('mkfifo', [path.join(root, 'fifo.json')]);
    for (const [name, kind] of [['link.json', 'a symlink'], ['fifo.json', 'a FIFO'], ['/dev/null', 'a character device']]) {
      await expect(precompress(root, { manifest: name })).rejects.toMatchObject({
        code: 'ERR_PRECOMPRESSOR_MANIFEST', message: expect.stringContaining(`is ${kind}`),
      });
    }
    expect(await fs.readFile(path.join(root, 'target.json'), 'utf8')).toBe('{"mine":true}');
    expect(fsSync.lstatSync(path.join(root, 'link.json')).isSymbolicLink()).toBe(true);
    expect(fsSync.lstatSync(path.join(root, 'fifo.json')).isFIFO()).toBe(true);
  });

  test('a manifest of ours, even a damaged one, is replaced; a missing one is written', async () => {
    await writeTree(root, SITE);
    await precompress(root, { manifest: 'meta/m.json' });
    expect(JSON.parse(await fs.readFile(path.join(root, 'meta/m.json'), 'utf8')).files['app.js'].variants.br).toBeDefined();
    const text = await fs.readFile(path.join(root, 'meta/m.json'), 'utf8');
    await fs.writeFile(path.join(root, 'meta/m.json'), text.slice(0, 40)); // cut short
    const r = await precompress(root, { manifest: 'meta/m.json' });
    expect(r.warnings.map((w) => w.message)).toEqual([expect.stringMatching(/not valid JSON.*starting afresh/)]);
    expect(JSON.parse(await fs.readFile(path.join(root, 'meta/m.json'), 'utf8')).schema).toBe(3);
  });
});

describe('system and home folders are refused unless allowSystemDir', () => {
  const home = '/home/alice';
  test.each([
    ['/', 'the root of the file system'],
    ['/usr', 'a system folder'],
    ['/usr/share/doc', 'a system folder'],
    ['/etc/nginx', 'a system folder'],
    ['/var', 'a system folder'],
    ['/var/lib/docker', 'a system folder'],
    ['/home', 'a folder that holds the home folder'],
    ['/home/alice', 'the home folder'],
  ])('%s: %s', (dir, why) => {
    expect(systemDirReason(dir, home)).toBe(why);
  });

  test.each(['/var/www/html', '/usr/share/nginx/html', '/srv/site', '/home/alice/site/dist', '/tmp/x', '/opt/app/dist', '/usr/local/apache2/htdocs'])(
    '%s is an ordinary folder', (dir) => {
      expect(systemDirReason(dir, home)).toBeNull();
    });

  test('the CLI refuses a home folder (also through a symlink) or one that holds it, naming --allow-system-dir, which lets it run', async () => {
    const home = path.join(root, 'home');
    await writeTree(home, SITE);
    await fs.symlink(home, path.join(root, 'link'));
    const env = { ...process.env, HOME: home }; // os.homedir() reads the process's real environment
    for (const dir of [home, path.join(root, 'link'), root]) {
      const r = await runCommand(process.execPath, [BIN, dir], { env });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^precompressor: Refusing to compress .*(it is the home folder|holds the home folder).*Set --allow-system-dir to compress it anyway\n$/);
    }
    expect(fsSync.existsSync(path.join(home, 'app.js.br'))).toBe(false);
    const r = await runCommand(process.execPath, [BIN, home, '--allow-system-dir', '--quiet'], { env });
    expect(r.code).toBe(0);
    expect(fsSync.existsSync(path.join(home, 'app.js.br'))).toBe(true);
  });
});
