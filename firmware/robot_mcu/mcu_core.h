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
 *   radio link  (DESIGN.md "Radio link"; mcu_radio_begin once a radio link exists)
 *               RTX from the command link goes to the radio link re-framed (same
 *               body), RRX and RST from the radio link to the command link; payloads
 *               are not read. No radio link, or the radio lost: RTX dropped and
 *               answered "ERR,no radio". No RST for MCU_RADIO_LOST_MS (from power-on
 *               too): one "RST,LOST,0,0" on the command link, lost until the next RST.
 *               Other radio lines are dropped and counted; full queues drop whole
 *               lines (counted), and relayed lines never take the last
 *               MCU_RELAY_RESERVE bytes of the command queue (replies, telemetry).
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
/* Of those, what relayed radio lines may never take: the MCU's own replies and
 * telemetry always find room, however much the radio sends. */
#define MCU_RELAY_RESERVE 128
/* Bytes waiting for the radio link: one longest line, its line feed and a NUL. */
#define MCU_RADIO_OUT_SIZE (HIL_LINE_MAX + 2)
/* No RST from the radio module for this long: the radio is lost (it sends one a second). */
#ifndef MCU_RADIO_LOST_MS
#define MCU_RADIO_LOST_MS 3000u
#endif

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
    /* radio link */
    hil_line_decoder radio_decoder;
    hil_line_encoder radio_encoder;
    uint8_t has_radio;
    uint8_t radio_lost;
    uint32_t radio_heard_ms;
    char radio_out[MCU_RADIO_OUT_SIZE];
    uint8_t radio_out_length;
    uint16_t radio_tx;          /* RTX relayed to the radio link */
    uint16_t radio_tx_dropped;  /* RTX without a radio (none, or lost): ERR,no radio */
    uint16_t radio_tx_overflow; /* RTX dropped, the radio queue full */
    uint16_t radio_rx;          /* RRX relayed to the command link */
    uint16_t radio_status;      /* RST relayed to the command link */
    uint16_t radio_rx_overflow; /* RRX/RST dropped, the command queue's relay share full */
    uint16_t radio_unexpected;  /* valid lines of other ids from the radio, dropped */
    uint16_t radio_losses;      /* RST,LOST sent */
} mcu_core;

/* Power-on state at now_ms, plain or checked line protocol. */
void mcu_init(mcu_core *mcu, uint8_t checked, uint32_t now_ms);
/* One byte from the control loop. */
void mcu_feed(mcu_core *mcu, uint8_t byte, uint32_t now_ms);
/* Whatever is due at now_ms: watchdog, telemetry, LED. */
void mcu_tick(mcu_core *mcu, uint32_t now_ms);
/* Move up to capacity queued output bytes to out; returns how many. */
uint16_t mcu_take(mcu_core *mcu, char *out, uint16_t capacity);
/* The MCU has a radio link from now on (the radio counts as heard at now_ms). */
void mcu_radio_begin(mcu_core *mcu, uint32_t now_ms);
/* One byte from the radio module. */
void mcu_radio_feed(mcu_core *mcu, uint8_t byte, uint32_t now_ms);
/* Move up to capacity bytes queued for the radio link to out; returns how many. */
uint8_t mcu_radio_take(mcu_core *mcu, char *out, uint8_t capacity);
/* L298 enable duty 0..full for a signed command (the rounding map, as the virtual MCU). */
uint16_t mcu_enable_duty(int16_t command, uint16_t full);

#ifdef __cplusplus
}
#endif

#endif
