/* CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor): the check
 * of both checked modes. avr-libc's _crc_xmodem_update computes the same from 0xFFFF. */
#ifndef HIL_CRC_H
#define HIL_CRC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HIL_CRC_INIT 0xFFFFu

uint16_t hil_crc16_update(uint16_t crc, uint8_t byte);
uint16_t hil_crc16(const uint8_t *data, size_t length);

#ifdef __cplusplus
}
#endif

#endif
