/* The robot MCU's behaviour on the command link, without hardware or clock.
 *
 * Exactly the behaviour of hil_sim's virtual MCU (DESIGN.md, and the shared vectors
 * hil_bridge/vectors/mcu_behaviour.yaml that test both):
 *   DRV<l>,<r>  sets both motors; a value outside -max..max gets one ERR and changes
 *               nothing; refused (silently, counted) while stopped or heartbeat lost.
 *   HBB,<t>     echoed with the stamp text unchanged; feeds the watchdog.
 *   COM,STOP    motors off and held off until COM,GO; COM,RESET back to power-on
 *               state; COM,VERSION answers "COM,VERSION <name> <version>"; other text
 *               gets "ERR,unknown command <text>".
 *   ARM...      accepted and ignored (the demo robot has no arm).
 *   every telemetry period: TL1<right>,<left> and TL2 with the sensors.
 *   watchdog:   no HBB for watchdog_ms (counted from power-on too): motors off, one
 *               "ERR,heartbeat lost", DRV refused until the next HBB.
 *
 * Plain C: robot_mcu.ino gives it bytes, the time and the sensor readings and drives
 * the pins from it; the host build runs the conformance vectors against it. Time is
 * milliseconds on any wrapping uint32 clock (millis()).
 */
#ifndef MCU_CORE_H
#define MCU_CORE_H

#include <stdint.h>

#include <hil_line.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MCU_NAME "hil-robot-mcu"
#define MCU_VERSION "0.1.0"
#define MCU_MAX_COMMAND 255
#define MCU_TELEMETRY_MS 100u
#define MCU_LED_MS 500u
#ifndef MCU_WATCHDOG_MS
#define MCU_WATCHDOG_MS 1500u
#endif
/* Longest ERR text, so an echoed command never pushes a line past the receiver's limit. */
#define MCU_ERR_TEXT_MAX 80
/* Bytes waiting for the serial port (replies and telemetry of one period fit easily). */
#define MCU_OUT_SIZE 256

/* TL2 fields, in telemetry.yaml order; distances and headings in tenths. */
enum {
    MCU_TL2_ULTRASONIC_TENTHS,
    MCU_TL2_IR_ADC,
    MCU_TL2_LIGHT_0,
    MCU_TL2_LIGHT_1,
    MCU_TL2_LIGHT_2,
    MCU_TL2_LIGHT_3,
    MCU_TL2_BUMPER_LEFT,
    MCU_TL2_BUMPER_RIGHT,
    MCU_TL2_HEADING_TENTHS,
    MCU_TL2_FIELDS
};

/* Why a DRV was refused. */
enum { MCU_REJECT_OUT_OF_RANGE, MCU_REJECT_STOPPED, MCU_REJECT_HEARTBEAT_LOST, MCU_REJECT_REASONS };

typedef struct {
    hil_line_decoder decoder;
    hil_line_encoder encoder;
    /* settings */
    uint32_t watchdog_ms; /* 0: no watchdog (a fault build, for the tests that must catch it) */
    /* state */
    int16_t left, right; /* the signed commands the motors run at */
    uint8_t stopped;
    uint8_t heartbeat_lost;
    uint8_t led_on;
    uint32_t last_heartbeat_ms;
    uint32_t start_ms;
    uint32_t next_telemetry_ms;
    uint32_t next_led_ms;
    int32_t tl2[MCU_TL2_FIELDS]; /* the sensors as the hardware layer read them */
    /* output queue */
    char out[MCU_OUT_SIZE];
    uint16_t out_length;
    /* counters */
    uint16_t drv_accepted;
    uint16_t drv_rejected[MCU_REJECT_REASONS];
    uint16_t arm_ignored;
    uint16_t hbb_echoed;
    uint16_t commands_unknown;
    uint16_t unexpected;
    uint16_t errors_sent;
    uint16_t telemetry_sent;
    uint16_t watchdog_trips;
    uint16_t unsendable;   /* replies too long for a line */
    uint16_t out_overflow; /* lines lost to a full output queue */
} mcu_core;

/* Power-on state at now_ms, plain or checked line protocol. */
void mcu_init(mcu_core *mcu, uint8_t checked, uint32_t now_ms);
/* One byte from the control loop. */
void mcu_feed(mcu_core *mcu, uint8_t byte, uint32_t now_ms);
/* Whatever is due at now_ms: watchdog, telemetry, LED. */
void mcu_tick(mcu_core *mcu, uint32_t now_ms);
/* Move up to capacity queued output bytes to out; returns how many. */
uint16_t mcu_take(mcu_core *mcu, char *out, uint16_t capacity);
/* L298 enable duty 0..full for a signed command (the rounding map, as the virtual MCU). */
uint16_t mcu_enable_duty(int16_t command, uint16_t full);

#ifdef __cplusplus
}
#endif

#endif
