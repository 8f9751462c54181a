// Just enough ELF64 reading to check the layout elf2sbf promises.
export interface ElfSection {
  name: string;
  type: number;
  flags: bigint;
  addr: bigint;
  offset: bigint;
  size: bigint;
}

export interface ElfInfo {
  type: number;
  machine: number;
  flags: number;
  entry: bigint;
  sections: ElfSection[];
  dynamicSymbols: string[];
}

export function readElf(buf: Buffer): ElfInfo {
  if (buf.readUInt32BE(0) !== 0x7f454c46) throw new Error('not an ELF file');
  const shoff = Number(buf.readBigUInt64LE(0x28));
  const shentsize = buf.readUInt16LE(0x3a);
  const shnum = buf.readUInt16LE(0x3c);
  const shstrndx = buf.readUInt16LE(0x3e);
  const raw = Array.from({ length: shnum }, (_, i) => {
    const at = shoff + i * shentsize;
    return {
      nameOff: buf.readUInt32LE(at),
      type: buf.readUInt32LE(at + 4),
      flags: buf.readBigUInt64LE(at + 8),
      addr: buf.readBigUInt64LE(at + 16),
      offset: buf.readBigUInt64LE(at + 24),
      size: buf.readBigUInt64LE(at + 32),
      link: buf.readUInt32LE(at + 40),
    };
  });
  const cstr = (base: number, off: number) => {
    const end = buf.indexOf(0, base + off);
    return buf.toString('utf8', base + off, end);
  };
  const shstr = Number(raw[shstrndx].offset);
  const sections = raw.map((s) => ({ ...s, name: cstr(shstr, s.nameOff) }));
  const dynsym = sections.find((s) => s.type === 11);
  const dynamicSymbols: string[] = [];
  if (dynsym) {
    const strBase = Number(sections[dynsym.link].offset);
    for (let at = Number(dynsym.offset) + 24; at < Number(dynsym.offset + dynsym.size); at += 24) {
      dynamicSymbols.push(cstr(strBase, buf.readUInt32LE(at)));
    }
  }
  return {
    type: buf.readUInt16LE(0x10),
    machine: buf.readUInt16LE(0x12),
    entry: buf.readBigUInt64LE(0x18),
    flags: buf.readUInt32LE(0x30),
    sections: sections.map(({ name, type, flags, addr, offset, size }) => ({ name, type, flags, addr, offset, size })),
    dynamicSymbols,
  };
}
