#include "hil_crc.h"

uint16_t hil_crc16_update(uint16_t crc, uint8_t byte) {
    uint8_t bit;
    crc ^= (uint16_t)byte << 8;
    for (bit = 0; bit < 8; bit++) {
        crc = (crc & 0x8000u) ? (uint16_t)((crc << 1) ^ 0x1021u) : (uint16_t)(crc << 1);
    }
    return crc;
}

uint16_t hil_crc16(const uint8_t *data, size_t length) {
    uint16_t crc = HIL_CRC_INIT;
    size_t i;
    for (i = 0; i < length; i++) {
        crc = hil_crc16_update(crc, data[i]);
    }
    return crc;
}
