#!/usr/bin/env python3
"""elf2sbf: relocatable BPF object (from upstream `llc -march=bpfel -mcpu=v2`)
-> loadable SBPF v0 shared object, as the Solana BPF loaders expect it.

Debian's ld.lld refuses e_machine 247, so this small "linker" does the few
things the loader needs (see toolchain/sbf/README.md):
  * one `.text` (all `.text*` input sections merged, cross-section calls
    resolved to pc-relative `call imm`),
  * one `.rodata` (`.rodata*` and `.data.rel.ro*` merged: vtables are
    read-only once relocated ahead of time),
  * every section's address equals its file offset,
  * `R_BPF_64_64` (lddw) and `R_BPF_64_ABS64` (pointers in rodata) resolved to
    0x1_0000_0000 + file offset,
  * syscalls left as `call -1` with a dynamic `R_BPF_64_32` relocation against
    an undefined `.dynsym` entry (the loader patches in murmur3(name)),
  * `callx`: the register copied into the immediate (SBPF v0 reads it there).

Anything the loader would reject is refused with an `ONCEPAY__SBF__*` code
instead of producing a `.so` that fails only at deploy time. `--unchecked`
turns refusals into warnings (only for tests of the loader's own checks).

Python 3 standard library only.
"""

import argparse
import re
import struct
import sys

MM_PROGRAM_START = 0x1_0000_0000
EM_BPF = 247
ET_REL, ET_DYN = 1, 3

SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA = 0, 1, 2, 3, 4
SHT_DYNAMIC, SHT_NOBITS, SHT_REL, SHT_DYNSYM = 6, 8, 9, 11
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 0x1, 0x2, 0x4
SHN_UNDEF, SHN_COMMON = 0, 0xFFF2
STT_NOTYPE, STT_FUNC, STT_SECTION = 0, 2, 3
STB_GLOBAL = 1
PT_LOAD, PT_DYNAMIC = 1, 2
PF_X, PF_W, PF_R = 1, 2, 4

R_BPF_64_64, R_BPF_64_ABS64, R_BPF_64_ABS32 = 1, 2, 3
R_BPF_64_NODYLD32, R_BPF_64_32 = 4, 10
RELOC_NAMES = {1: "R_BPF_64_64", 2: "R_BPF_64_ABS64", 3: "R_BPF_64_ABS32",
               4: "R_BPF_64_NODYLD32", 10: "R_BPF_64_32"}

DT_NULL, DT_STRTAB, DT_SYMTAB, DT_STRSZ, DT_SYMENT = 0, 5, 6, 10, 11
DT_REL, DT_RELSZ, DT_RELENT, DT_TEXTREL, DT_FLAGS = 17, 18, 19, 22, 30
DF_TEXTREL = 0x4

INSN = 8
OP_LDDW, OP_CALL, OP_CALLX, OP_EXIT = 0x18, 0x85, 0x8D, 0x95
CLASS_JMP32 = 0x06

# Undefined symbols the loader resolves: Solana syscalls. Anything else would
# fail at deploy time with "Unresolved symbol".
SYSCALL_NAME = re.compile(r"^(sol_[a-z0-9_]+|abort)$")
# Functions std calls that the program itself defines (toolchain/sbf/std/solana-std.patch), and what defines them.
PROGRAM_DEFINED = {
    "custom_panic": "std's panic handler calls the program's custom_panic(&PanicInfo), which solana-program's "
                    "entrypoint! macro (so Anchor's #[program]) defines; a program without it must define "
                    "#[no_mangle] fn custom_panic(info: &core::panic::PanicInfo<'_>) (e.g. logging the message)",
}

# Sections that carry nothing the loader reads.
IGNORED_SECTION = re.compile(
    r"^(\.BTF(\.ext)?|\.debug.*|\.llvm_addrsig|\.note.*|\.comment|\.eh_frame|"
    r"\.llvm\..*|\.stack_sizes)$")


class RefusedError(Exception):
    """The input cannot become a loadable SBPF v0 program."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def valid_v0_opcodes():
    """Opcodes the SBPF v0 verifier accepts (lddw handled separately)."""
    ops = {OP_LDDW, OP_CALL, OP_CALLX, OP_EXIT, 0x05}
    # ALU32 (class 4) and ALU64 (class 7): add sub mul div or and lsh rsh
    # neg mod xor mov arsh, immediate and register forms; end (le/be).
    for cls in (0x04, 0x07):
        for op in (0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70,
                   0x90, 0xA0, 0xB0, 0xC0):
            ops.add(cls | op)
            ops.add(cls | op | 0x08)
        ops.add(cls | 0x80)  # neg
    ops.update({0xD4, 0xDC})
    ops.update({0x61, 0x69, 0x71, 0x79})  # ldx w h b dw
    ops.update({0x62, 0x6A, 0x72, 0x7A})  # st  w h b dw
    ops.update({0x63, 0x6B, 0x73, 0x7B})  # stx w h b dw
    # jeq jgt jge jset jne jsgt jsge jlt jle jslt jsle (imm and reg)
    for op in (0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0xA0, 0xB0, 0xC0, 0xD0):
        ops.add(0x05 | op)
        ops.add(0x05 | op | 0x08)
    return ops


V0_OPCODES = valid_v0_opcodes()
DIV_MOD_OPS = {0x30, 0x90}


class Section:
    def __init__(self, index, name, sh):
        (self.name_off, self.type, self.flags, self.addr, self.offset,
         self.size, self.link, self.info, self.addralign, self.entsize) = sh
        self.index = index
        self.name = name
        self.data = b""


class Symbol:
    def __init__(self, index, name, value, size, info, shndx):
        self.index, self.name, self.value, self.size = index, name, value, size
        self.bind, self.type, self.shndx = info >> 4, info & 0xF, shndx


def cstr(blob, off):
    end = blob.index(b"\0", off)
    return blob[off:end].decode("utf-8", "replace")


def parse_object(blob):
    if len(blob) < 64 or blob[:4] != b"\x7fELF":
        raise RefusedError("ONCEPAY__SBF__NOT_ELF", "input is not an ELF file")
    if blob[4] != 2 or blob[5] != 1:
        raise RefusedError("ONCEPAY__SBF__NOT_ELF64LE", "input is not ELF64 little-endian")
    (e_type, e_machine, _ver, _entry, _phoff, e_shoff, _flags, _ehsize, _phentsize,
     _phnum, e_shentsize, e_shnum, e_shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", blob, 16)
    if e_machine != EM_BPF:
        raise RefusedError("ONCEPAY__SBF__NOT_BPF", f"e_machine is {e_machine}, expected {EM_BPF} (BPF)")
    if e_type != ET_REL:
        raise RefusedError("ONCEPAY__SBF__NOT_RELOCATABLE", f"e_type is {e_type}, expected ET_REL")
    raw = [struct.unpack_from("<IIQQQQIIQQ", blob, e_shoff + i * e_shentsize) for i in range(e_shnum)]
    shstr = raw[e_shstrndx]
    shstrtab = blob[shstr[4]:shstr[4] + shstr[5]]
    sections = []
    for i, sh in enumerate(raw):
        sec = Section(i, cstr(shstrtab, sh[0]), sh)
        if sec.type != SHT_NOBITS:
            sec.data = blob[sec.offset:sec.offset + sec.size]
        sections.append(sec)
    symbols = []
    symtab = next((s for s in sections if s.type == SHT_SYMTAB), None)
    if symtab is not None:
        strtab = sections[symtab.link].data
        for i in range(symtab.size // 24):
            name_off, info, _other, shndx, value, size = struct.unpack_from("<IBBHQQ", symtab.data, i * 24)
            name = cstr(strtab, name_off)
            if info & 0xF == STT_SECTION and shndx < len(sections):
                name = sections[shndx].name
            symbols.append(Symbol(i, name, value, size, info, shndx))
    return sections, symbols


def align(value, to):
    return value if to <= 1 else (value + to - 1) // to * to


def is_text(sec):
    return sec.type == SHT_PROGBITS and sec.flags & SHF_EXECINSTR


def is_rodata(sec):
    return (sec.type == SHT_PROGBITS and sec.flags & SHF_ALLOC and not sec.flags & SHF_EXECINSTR
            and (sec.name.startswith(".rodata") or sec.name.startswith(".data.rel.ro")
                 or not sec.flags & SHF_WRITE))


def classify(sections, refuse):
    text, rodata, rels = [], [], []
    for sec in sections:
        if sec.type == SHT_NULL or sec.type in (SHT_SYMTAB, SHT_STRTAB) or IGNORED_SECTION.match(sec.name):
            continue
        if sec.type == SHT_RELA:
            refuse("ONCEPAY__SBF__RELA", f"section {sec.name}: RELA relocations (BPF objects use REL)")
        elif sec.type == SHT_REL:
            rels.append(sec)
        elif is_text(sec):
            text.append(sec)
        elif is_rodata(sec):
            rodata.append(sec)
        elif sec.flags & SHF_ALLOC and sec.size == 0:
            continue
        elif sec.flags & SHF_ALLOC and (sec.flags & SHF_WRITE or sec.type == SHT_NOBITS):
            refuse("ONCEPAY__SBF__WRITABLE_SECTION",
                   f"writable section {sec.name} ({sec.size} bytes): SBPF programs cannot have mutable "
                   "globals (static mut, .data/.bss); keep state in accounts")
        elif sec.flags & SHF_ALLOC:
            refuse("ONCEPAY__SBF__UNKNOWN_SECTION", f"unexpected loadable section {sec.name} (type {sec.type})")
    if not text:
        raise RefusedError("ONCEPAY__SBF__NO_TEXT", "no executable section in the object")
    return text, rodata, rels


def build(blob, unchecked=False, warn=lambda m: None):
    """Returns the bytes of the `.so` built from the relocatable object `blob`."""

    def refuse(code, message):
        if not unchecked:
            raise RefusedError(code, message)
        warn(f"{code}: {message} (--unchecked: continuing)")

    sections, symbols = parse_object(blob)
    text_secs, ro_secs, rel_secs = classify(sections, refuse)

    # Layout: ELF header, 3 program headers, then .text and .rodata; address = file offset.
    header_size = 64 + 3 * 56
    base = {}
    text = bytearray()
    text_off = align(header_size, 8)
    for sec in text_secs:
        text.extend(b"\0" * (align(len(text), max(sec.addralign, 8)) - len(text)))
        base[sec.index] = text_off + len(text)
        text.extend(sec.data)
    rodata = bytearray()
    ro_align = max([s.addralign for s in ro_secs] + [8])
    ro_off = align(text_off + len(text), ro_align)
    for sec in ro_secs:
        rodata.extend(b"\0" * (align(len(rodata), max(sec.addralign, 1)) - len(rodata)))
        base[sec.index] = ro_off + len(rodata)
        rodata.extend(sec.data if sec.type != SHT_NOBITS else b"\0" * sec.size)
    text_index = {s.index for s in text_secs}
    ro_index = {s.index for s in ro_secs}

    def sym_offset(sym):
        """Output file offset of a defined symbol, None when undefined."""
        if sym.shndx == SHN_UNDEF:
            return None
        if sym.shndx == SHN_COMMON:
            refuse("ONCEPAY__SBF__WRITABLE_SECTION", f"common symbol {sym.name}: mutable global")
            return 0
        if sym.shndx not in base:
            refuse("ONCEPAY__SBF__BAD_SYMBOL", f"symbol {sym.name} lives in a section that is not loaded")
            return 0
        return base[sym.shndx] + sym.value

    syscalls = {}  # name -> .dynsym index
    dyn_relocs = []  # (file offset of the call, dynsym index)

    def dynsym_index(name):
        if name not in syscalls:
            syscalls[name] = len(syscalls) + 2  # 0 = null, 1 = entrypoint
        return syscalls[name]

    for rel in rel_secs:
        target = sections[rel.info]
        if IGNORED_SECTION.match(target.name) or (target.size == 0 and target.index not in base):
            continue
        in_text = rel.info in text_index
        if not in_text and rel.info not in ro_index:
            refuse("ONCEPAY__SBF__UNKNOWN_SECTION", f"relocations for unexpected section {target.name}")
            continue
        buf, buf_off = (text, text_off) if in_text else (rodata, ro_off)
        for i in range(rel.size // 16):
            r_offset, r_info = struct.unpack_from("<QQ", rel.data, i * 16)
            rtype, sym = r_info & 0xFFFFFFFF, symbols[r_info >> 32]
            at = base[rel.info] + r_offset - buf_off  # index into buf
            where = f"{target.name}+0x{r_offset:x}"
            if in_text and rtype == R_BPF_64_64:
                if buf[at] != OP_LDDW:
                    refuse("ONCEPAY__SBF__BAD_RELOCATION", f"R_BPF_64_64 at {where} is not on an lddw")
                    continue
                off = sym_offset(sym)
                if off is None:
                    refuse("ONCEPAY__SBF__UNDEFINED_SYMBOL",
                           f"address of undefined symbol {sym.name} taken at {where}")
                    continue
                addend = struct.unpack_from("<I", buf, at + 4)[0]
                value = MM_PROGRAM_START + off + addend
                struct.pack_into("<I", buf, at + 4, value & 0xFFFFFFFF)
                struct.pack_into("<I", buf, at + 12, value >> 32)
            elif in_text and rtype == R_BPF_64_32:
                if buf[at] != OP_CALL:
                    refuse("ONCEPAY__SBF__BAD_RELOCATION", f"R_BPF_64_32 at {where} is not on a call")
                    continue
                off = sym_offset(sym)
                if off is None:
                    if sym.name in PROGRAM_DEFINED:
                        refuse("ONCEPAY__SBF__UNDEFINED_SYMBOL",
                               f"call to undefined symbol {sym.name} at {where}: {PROGRAM_DEFINED[sym.name]}")
                    elif not SYSCALL_NAME.match(sym.name):
                        refuse("ONCEPAY__SBF__UNDEFINED_SYMBOL",
                               f"call to undefined symbol {sym.name} at {where}: not a Solana syscall "
                               "(a libcall the opt pass should have rewritten?)")
                    buf[at + 1] = buf[at + 1] & 0x0F  # src = 0: syscall
                    struct.pack_into("<i", buf, at + 4, -1)
                    dyn_relocs.append((buf_off + at, dynsym_index(sym.name)))
                elif sym.shndx in text_index:
                    # libbpf convention: target slot = symbol slot + imm + 1.
                    imm = struct.unpack_from("<i", buf, at + 4)[0]
                    target_slot = off // INSN + imm + 1
                    here = (buf_off + at) // INSN
                    buf[at + 1] = (buf[at + 1] & 0x0F) | 0x10
                    struct.pack_into("<i", buf, at + 4, target_slot - here - 1)
                else:
                    refuse("ONCEPAY__SBF__BAD_RELOCATION", f"call at {where} targets data symbol {sym.name}")
            elif not in_text and rtype == R_BPF_64_ABS64:
                off = sym_offset(sym)
                if off is None:
                    refuse("ONCEPAY__SBF__UNDEFINED_SYMBOL", f"pointer to undefined symbol {sym.name} at {where}")
                    continue
                addend = struct.unpack_from("<Q", buf, at)[0]
                struct.pack_into("<Q", buf, at, (MM_PROGRAM_START + off + addend) & (2 ** 64 - 1))
            else:
                refuse("ONCEPAY__SBF__BAD_RELOCATION",
                       f"relocation {RELOC_NAMES.get(rtype, rtype)} at {where} ({sym.name}) is not supported "
                       "by SBPF v0")

    check_instructions(text, refuse)

    entry = [s for s in symbols if s.name == "entrypoint" and s.bind == STB_GLOBAL and s.shndx in text_index]
    if not entry:
        raise RefusedError("ONCEPAY__SBF__NO_ENTRYPOINT", "no global `entrypoint` function in .text")
    entry_off = sym_offset(entry[0])
    return write_so(bytes(text), text_off, bytes(rodata), ro_off, ro_align, entry_off, syscalls, dyn_relocs)


def check_instructions(text, refuse):
    """Refuses instructions SBPF v0 lacks; moves the callx register to the immediate."""
    slot, count = 0, len(text) // INSN
    while slot < count:
        at = slot * INSN
        op, regs = text[at], text[at + 1]
        dst, src = regs & 0x0F, regs >> 4
        off, imm = struct.unpack_from("<hi", text, at + 2)
        if op & 0x07 == CLASS_JMP32:
            refuse("ONCEPAY__SBF__JMP32", f"JMP32 instruction (opcode 0x{op:02x}) at slot {slot}: SBPF v0 has no "
                   "JMP32 class (build with llc -mcpu=v2, not v3)")
        elif op not in V0_OPCODES:
            refuse("ONCEPAY__SBF__BAD_OPCODE", f"opcode 0x{op:02x} at slot {slot} is not part of SBPF v0")
        elif op & 0x07 in (0x04, 0x07) and op & 0xF0 in DIV_MOD_OPS and off != 0:
            refuse("ONCEPAY__SBF__BAD_OPCODE", f"signed div/mod (cpu v4 encoding) at slot {slot}")
        elif op & 0x07 in (0x04, 0x07) and op & 0xF0 in DIV_MOD_OPS and not op & 0x08 and imm == 0:
            refuse("ONCEPAY__SBF__DIVISION_BY_ZERO", f"division by constant zero at slot {slot}")
        if op == OP_CALLX:
            reg = dst if dst else (imm if 0 <= imm <= 9 else src)
            struct.pack_into("<i", text, at + 4, reg)
        if op == OP_LDDW:
            if slot + 1 >= count or text[at + INSN] != 0:
                refuse("ONCEPAY__SBF__BAD_OPCODE", f"incomplete lddw at slot {slot}")
            slot += 2
        else:
            slot += 1


def write_so(text, text_off, rodata, ro_off, ro_align, entry_off, syscalls, dyn_relocs):
    names = [b"entrypoint"] + [n.encode() for n in syscalls]
    dynstr = bytearray(b"\0")
    name_at = {}
    for n in names:
        name_at[n] = len(dynstr)
        dynstr.extend(n + b"\0")

    pos = ro_off + len(rodata)
    dynamic_off = align(pos, 8)
    dynsym_count = 2 + len(syscalls)
    entries_count = 10 if dyn_relocs else 6  # must match dyn_entries below
    dynamic_size = entries_count * 16
    dynsym_off = align(dynamic_off + dynamic_size, 8)
    dynsym_size = dynsym_count * 24
    dynstr_off = dynsym_off + dynsym_size
    reldyn_off = align(dynstr_off + len(dynstr), 8)
    reldyn_size = len(dyn_relocs) * 16
    shstr_names = [b"", b".text", b".rodata", b".dynamic", b".dynsym", b".dynstr", b".rel.dyn", b".shstrtab"]
    has_ro = len(rodata) > 0
    if not has_ro:
        shstr_names.remove(b".rodata")
    shstrtab = bytearray()
    shname = {}
    for n in shstr_names:
        shname[n] = len(shstrtab)
        shstrtab.extend(n + b"\0")
    shstrtab_off = reldyn_off + reldyn_size
    shoff = align(shstrtab_off + len(shstrtab), 8)

    idx = {n: i for i, n in enumerate(shstr_names)}
    text_idx = idx[b".text"]

    dynsym = bytearray(24)
    dynsym += struct.pack("<IBBHQQ", name_at[b"entrypoint"], (STB_GLOBAL << 4) | STT_FUNC, 0, text_idx, entry_off, 0)
    for n in syscalls:
        dynsym += struct.pack("<IBBHQQ", name_at[n.encode()], (STB_GLOBAL << 4) | STT_NOTYPE, 0, SHN_UNDEF, 0, 0)

    reldyn = bytearray()
    for offset, sym_index in dyn_relocs:
        reldyn += struct.pack("<QQ", offset, (sym_index << 32) | R_BPF_64_32)

    dyn_entries = [(DT_FLAGS, DF_TEXTREL)]
    if dyn_relocs:
        dyn_entries += [(DT_REL, reldyn_off), (DT_RELSZ, reldyn_size), (DT_RELENT, 16)]
    dyn_entries += [(DT_SYMTAB, dynsym_off), (DT_SYMENT, 24), (DT_STRTAB, dynstr_off), (DT_STRSZ, len(dynstr))]
    if dyn_relocs:
        dyn_entries += [(DT_TEXTREL, 0)]
    dyn_entries += [(DT_NULL, 0)]
    assert len(dyn_entries) == entries_count
    dynamic = b"".join(struct.pack("<qQ", t, v) for t, v in dyn_entries)

    out = bytearray(shoff)
    out[text_off:text_off + len(text)] = text
    out[ro_off:ro_off + len(rodata)] = rodata
    out[dynamic_off:dynamic_off + dynamic_size] = dynamic
    out[dynsym_off:dynsym_off + dynsym_size] = dynsym
    out[dynstr_off:dynstr_off + len(dynstr)] = dynstr
    out[reldyn_off:reldyn_off + reldyn_size] = reldyn
    out[shstrtab_off:shstrtab_off + len(shstrtab)] = shstrtab

    def shdr(name, sh_type, flags, off, size, link=0, info=0, addralign=1, entsize=0, alloc=True):
        return struct.pack("<IIQQQQIIQQ", shname[name], sh_type, flags, off if alloc else 0, off, size,
                           link, info, addralign, entsize)

    shdrs = bytearray(64)
    shdrs += shdr(b".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, text_off, len(text), addralign=8)
    if has_ro:
        shdrs += shdr(b".rodata", SHT_PROGBITS, SHF_ALLOC, ro_off, len(rodata), addralign=ro_align)
    shdrs += shdr(b".dynamic", SHT_DYNAMIC, SHF_ALLOC | SHF_WRITE, dynamic_off, dynamic_size,
                  link=idx[b".dynstr"], addralign=8, entsize=16)
    shdrs += shdr(b".dynsym", SHT_DYNSYM, SHF_ALLOC, dynsym_off, dynsym_size, link=idx[b".dynstr"], info=1,
                  addralign=8, entsize=24)
    shdrs += shdr(b".dynstr", SHT_STRTAB, SHF_ALLOC, dynstr_off, len(dynstr))
    shdrs += shdr(b".rel.dyn", SHT_REL, SHF_ALLOC, reldyn_off, reldyn_size, link=idx[b".dynsym"],
                  addralign=8, entsize=16)
    shdrs += shdr(b".shstrtab", SHT_STRTAB, 0, shstrtab_off, len(shstrtab), alloc=False)
    out += shdrs

    phdrs = struct.pack("<IIQQQQQQ", PT_LOAD, PF_R | PF_X, text_off, text_off, text_off, len(text), len(text), 8)
    ro_end = reldyn_off + reldyn_size
    phdrs += struct.pack("<IIQQQQQQ", PT_LOAD, PF_R, ro_off, ro_off, ro_off, ro_end - ro_off, ro_end - ro_off, 8)
    phdrs += struct.pack("<IIQQQQQQ", PT_DYNAMIC, PF_R | PF_W, dynamic_off, dynamic_off, dynamic_off,
                         dynamic_size, dynamic_size, 8)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    header = ident + struct.pack("<HHIQQQIHHHHHH", ET_DYN, EM_BPF, 1, entry_off, 64, shoff, 0, 64, 56, 3, 64,
                                 len(shstr_names), idx[b".shstrtab"])
    out[0:64] = header
    out[64:64 + len(phdrs)] = phdrs
    return bytes(out)


def main(argv):
    parser = argparse.ArgumentParser(
        prog="elf2sbf", description="Turn a relocatable BPF object (llc -march=bpfel -mcpu=v2) into a loadable "
        "SBPF v0 .so. Refuses (exit 2, ONCEPAY__SBF__* code) what the Solana loader would reject.")
    parser.add_argument("input", help="relocatable object from llc -filetype=obj")
    parser.add_argument("output", help="the .so to write")
    parser.add_argument("--unchecked", action="store_true",
                        help="warn instead of refusing (only to test the loader's own verification)")
    args = parser.parse_args(argv)

    def warn(message):
        print(f"elf2sbf: warning: {message}", file=sys.stderr)

    try:
        with open(args.input, "rb") as f:
            so = build(f.read(), unchecked=args.unchecked, warn=warn)
    except RefusedError as e:
        print(f"elf2sbf: error {e.code}: {e}", file=sys.stderr)
        return 2
    with open(args.output, "wb") as f:
        f.write(so)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
