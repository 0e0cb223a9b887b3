"""CRC-16 of the checked modes of both link protocols.

CRC-16/CCITT-FALSE: polynomial 0x1021, initial value 0xFFFF, no reflection, no final
XOR (check value 0x29B1 for ``b"123456789"``). It is the CRC that avr-libc computes
with ``_crc_xmodem_update`` starting from 0xFFFF, so firmware and PC share it without
a table. The stdlib's ``binascii.crc_hqx`` computes it in C.
"""

from binascii import crc_hqx

#: Initial register value of CRC-16/CCITT-FALSE.
CRC16_INIT = 0xFFFF


def crc16(data: bytes, value: int = CRC16_INIT) -> int:
    """CRC-16/CCITT-FALSE of ``data``, optionally continuing from ``value``."""
    return crc_hqx(data, value)
