// `oncepay --help` and every command's help are a contract: the text is held in cli-help.snapshot.txt (written from
// main before the command line moved into cli/, issue 31) and must stay byte-for-byte the same. A change to a help
// that is meant rewrites the snapshot in the same commit:
//   npx ts-node -T -e "process.stdout.write(require('./tests/contracts/cli-help').helpOfEveryCommand())" \
//     > tests/contracts/cli-help.snapshot.txt
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { helpOfEveryCommand } from './cli-help';

const SNAPSHOT = path.join(__dirname, 'cli-help.snapshot.txt');

describe('cli contract: the --help of every command is unchanged', () => {
  const held = fs.readFileSync(SNAPSHOT, 'utf8');
  const now = helpOfEveryCommand();
  const section = (text: string) =>
    new Map(text.split(/^(?==== )/m).map((s) => [s.slice(0, s.indexOf('\n')), s] as const));

  it('the same commands as the snapshot', () => {
    expect([...section(now).keys()]).to.deep.equal([...section(held).keys()]);
    expect(section(held).size).to.be.greaterThan(40);
  });

  it("each command's help, byte for byte", () => {
    const h = section(held);
    for (const [name, text] of section(now)) expect(text, name).to.equal(h.get(name));
    expect(now).to.equal(held);
  });
});
