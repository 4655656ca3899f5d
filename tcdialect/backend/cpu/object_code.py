"""The external symbols an ELF object file needs, read from its symbol table.

A kernel loaded from the compilation cache is object code that MCJIT links
into this process: every global undefined symbol (`expf`, `memset`,
`__tc_parallel_team`, ...) must resolve here, or LLVM aborts the process.
`undefined_symbols` lists them so that the loader can check each with the
JIT's own lookup first and compile afresh instead.

Only 64-bit little-endian ELF (Linux on x86-64 and AArch64) is read; other
formats give None (their code is not cached).
"""

from __future__ import annotations

import struct

_SECTION = struct.Struct("<IIQQQQIIQQ")
_SYMBOL = struct.Struct("<IBBHQQ")
_SHT_SYMTAB = 2
_STB_GLOBAL = 1


def _c_string(data: bytes, start: int) -> str:
    end = data.index(b"\0", start)
    return data[start:end].decode()


def undefined_symbols(obj: bytes) -> list[str] | None:
    """Names of the global symbols `obj` uses but does not define, sorted;
    None when `obj` is not a well-formed 64-bit little-endian ELF file."""
    if len(obj) < 64 or obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return None
    try:
        (shoff,) = struct.unpack_from("<Q", obj, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
        if shentsize != _SECTION.size:
            return None
        sections = [
            _SECTION.unpack_from(obj, shoff + i * shentsize) for i in range(shnum)
        ]
        names: set[str] = set()
        for section in sections:
            if section[1] != _SHT_SYMTAB:
                continue
            offset, size, link = section[4], section[5], section[6]
            strtab_offset = sections[link][4]
            for at in range(offset, offset + size, _SYMBOL.size):
                name, info, _, shndx, _, _ = _SYMBOL.unpack_from(obj, at)
                if shndx == 0 and name and info >> 4 == _STB_GLOBAL:
                    names.add(_c_string(obj, strtab_offset + name))
        return sorted(names)
    except (struct.error, IndexError, ValueError, UnicodeDecodeError):
        return None
