#include "mcu_core.h"

#include <string.h>

#include <hil_signal.h>

/* uint32 millisecond clocks wrap after 49 days: compare by difference. */
static uint8_t reached(uint32_t now, uint32_t deadline) { return (int32_t)(now - deadline) >= 0; }

static void queue(mcu_core *m, const char *line, uint8_t length) {
    if (m->out_length + length > MCU_OUT_SIZE) {
        m->out_overflow++;
        return;
    }
    memcpy(m->out + m->out_length, line, length);
    m->out_length = (uint16_t)(m->out_length + length);
}

/* Send body[0..length) (in a HIL_LINE_BUFFER buffer) as one line; 0 if it cannot be. */
static uint8_t send(mcu_core *m, char *body, uint8_t length) {
    uint8_t line = hil_line_finish(&m->encoder, body, length);
    if (line == 0) {
        m->unsendable++;
        return 0;
    }
    queue(m, body, line);
    return 1;
}

static uint8_t append(char *buf, uint8_t length, const char *text, uint8_t text_length) {
    uint8_t room = (uint8_t)(HIL_LINE_MAX - length);
    if (text_length > room) {
        text_length = room;
    }
    memcpy(buf + length, text, text_length);
    return (uint8_t)(length + text_length);
}

static uint8_t append_text(char *buf, uint8_t length, const char *text) {
    return append(buf, length, text, (uint8_t)strlen(text));
}

static void error(mcu_core *m, const char *text, uint8_t text_length) {
    char line[HIL_LINE_BUFFER];
    uint8_t length = append_text(line, 0, "ERR,");
    if (text_length > MCU_ERR_TEXT_MAX) {
        text_length = MCU_ERR_TEXT_MAX;
    }
    length = append(line, length, text, text_length);
    if (send(m, line, length)) {
        m->errors_sent++;
    }
}

/* The size of the line body[0..length) once framed by encoder (checked suffix, '\n'). */
static uint8_t framed_size(const hil_line_encoder *encoder, uint8_t length) {
    return (uint8_t)(length + 1 + (encoder->checked ? HIL_LINE_CHECK_LENGTH : 0));
}

/* An RTX from the command link: on to the radio link, framed in place in its queue. */
static void relay_to_radio(mcu_core *m, const hil_line_message *message) {
    uint8_t size;
    if (!m->has_radio || m->radio_lost) {
        m->radio_tx_dropped++;
        error(m, "no radio", 8);
        return;
    }
    size = framed_size(&m->radio_encoder, message->text_length);
    if ((uint16_t)m->radio_out_length + size + 1 > MCU_RADIO_OUT_SIZE) {
        m->radio_tx_overflow++;
        return;
    }
    memcpy(m->radio_out + m->radio_out_length, message->text, message->text_length);
    size = hil_line_finish(&m->radio_encoder, m->radio_out + m->radio_out_length, message->text_length);
    if (size == 0) {
        m->unsendable++;
        return;
    }
    m->radio_out_length = (uint8_t)(m->radio_out_length + size);
    m->radio_tx++;
}

/* An RRX or RST from the radio link: on to the command link, framed in place in its
 * queue, never into the last MCU_RELAY_RESERVE bytes. */
static void relay_to_command(mcu_core *m, const hil_line_message *message) {
    uint8_t size = framed_size(&m->encoder, message->text_length);
    if (m->out_length + size + 1 > MCU_OUT_SIZE - MCU_RELAY_RESERVE) {
        m->radio_rx_overflow++;
        return;
    }
    memcpy(m->out + m->out_length, message->text, message->text_length);
    size = hil_line_finish(&m->encoder, m->out + m->out_length, message->text_length);
    if (size == 0) {
        m->unsendable++;
        return;
    }
    m->out_length = (uint16_t)(m->out_length + size);
    if (message->text[1] == 'S') {
        m->radio_status++;
    } else {
        m->radio_rx++;
    }
}

static void check_radio(mcu_core *m, uint32_t now) {
    char line[32]; /* "RST,LOST,0,0" and its checked suffix: a small frame on the stack */
    if (!m->has_radio || m->radio_lost || !reached(now, m->radio_heard_ms + MCU_RADIO_LOST_MS)) {
        return;
    }
    m->radio_lost = 1;
    m->radio_losses++;
    send(m, line, append_text(line, 0, "RST,LOST,0,0"));
}

static void set_motors(mcu_core *m, int16_t left, int16_t right) {
    m->left = left;
    m->right = right;
}

static void check_watchdog(mcu_core *m, uint32_t now) {
    if (m->watchdog_ms == 0 || m->heartbeat_lost || !reached(now, m->last_heartbeat_ms + m->watchdog_ms)) {
        return;
    }
    m->heartbeat_lost = 1;
    m->watchdog_trips++;
    set_motors(m, 0, 0);
    error(m, "heartbeat lost", 14);
}

static uint8_t in_range(int32_t value) { return value >= -MCU_MAX_COMMAND && value <= MCU_MAX_COMMAND; }

static void drive(mcu_core *m, const hil_line_message *message) {
    if (!in_range(message->left) || !in_range(message->right)) {
        /* "DRV left 300 and right -300 out of range -255..255" */
        char text[HIL_LINE_BUFFER];
        uint8_t length = append_text(text, 0, "DRV ");
        if (!in_range(message->left)) {
            length = append_text(text, length, "left ");
            length = (uint8_t)(length + hil_format_long(text + length, message->left));
            if (!in_range(message->right)) {
                length = append_text(text, length, " and ");
            }
        }
        if (!in_range(message->right)) {
            length = append_text(text, length, "right ");
            length = (uint8_t)(length + hil_format_long(text + length, message->right));
        }
        length = append_text(text, length, " out of range ");
        length = (uint8_t)(length + hil_format_long(text + length, -MCU_MAX_COMMAND));
        length = append_text(text, length, "..");
        length = (uint8_t)(length + hil_format_long(text + length, MCU_MAX_COMMAND));
        m->drv_rejected[MCU_REJECT_OUT_OF_RANGE]++;
        error(m, text, length);
    } else if (m->stopped) {
        m->drv_rejected[MCU_REJECT_STOPPED]++;
    } else if (m->heartbeat_lost) {
        m->drv_rejected[MCU_REJECT_HEARTBEAT_LOST]++;
    } else {
        m->drv_accepted++;
        set_motors(m, (int16_t)message->left, (int16_t)message->right);
    }
}

static uint8_t is(const hil_line_message *message, const char *word) {
    return message->text_length == strlen(word) && memcmp(message->text, word, message->text_length) == 0;
}

static void command(mcu_core *m, const hil_line_message *message, uint32_t now) {
    char line[HIL_LINE_BUFFER];
    uint8_t length, i;
    if (is(message, "STOP")) {
        m->stopped = 1;
        set_motors(m, 0, 0);
    } else if (is(message, "GO")) {
        m->stopped = 0;
    } else if (is(message, "RESET")) {
        /* Power-on state: the watchdog counts from the reset, as from power-on. */
        m->stopped = 0;
        m->heartbeat_lost = 0;
        m->last_heartbeat_ms = now;
        set_motors(m, 0, 0);
    } else if (is(message, "VERSION")) {
        length = append_text(line, 0, "COM,VERSION " MCU_NAME " " MCU_VERSION);
        send(m, line, length);
    } else {
        m->commands_unknown++;
        length = append_text(line, 0, "unknown command ");
        for (i = 0; i < message->text_length && length < HIL_LINE_MAX; i++) {
            char c = message->text[i];
            line[length++] = (c >= ' ' && c <= '~') ? c : '?';
        }
        error(m, line, length);
    }
}

static void handle(mcu_core *m, const hil_line_message *message, uint32_t now) {
    char line[HIL_LINE_BUFFER];
    uint8_t length;
    switch (message->type) {
    case HIL_MSG_DRV:
        drive(m, message);
        break;
    case HIL_MSG_HBB:
        m->last_heartbeat_ms = now;
        m->heartbeat_lost = 0;
        length = append_text(line, 0, "HBB,");
        if (message->text_length <= HIL_LINE_MAX - length) {
            length = append(line, length, message->text, message->text_length);
            if (send(m, line, length)) {
                m->hbb_echoed++;
            }
        } else {
            m->unsendable++; /* "HBB<128-byte stamp>" gains a comma and no longer fits */
        }
        break;
    case HIL_MSG_COM:
        command(m, message, now);
        break;
    case HIL_MSG_ARM:
        m->arm_ignored++;
        break;
    case HIL_MSG_RELAY:
        relay_to_radio(m, message);
        break;
    default: /* ERR or TLn from the brain: valid, but not for an MCU */
        m->unexpected++;
        break;
    }
}

static void send_telemetry(mcu_core *m) {
    char line[HIL_LINE_BUFFER];
    uint8_t length, i;
    length = append_text(line, 0, "TL1");
    length = (uint8_t)(length + hil_format_long(line + length, m->right));
    line[length++] = ',';
    length = (uint8_t)(length + hil_format_long(line + length, m->left));
    if (send(m, line, length)) {
        m->telemetry_sent++;
    }
    length = append_text(line, 0, "TL2");
    for (i = 0; i < MCU_TL2_FIELDS; i++) {
        uint8_t tenths = i == MCU_TL2_ULTRASONIC_TENTHS || i == MCU_TL2_HEADING_TENTHS;
        if (i > 0) {
            line[length++] = ',';
        }
        length = (uint8_t)(length + hil_format_fixed(line + length, m->tl2[i], tenths ? 1 : 0));
    }
    if (send(m, line, length)) {
        m->telemetry_sent++;
    }
}

/* A timer on its grid start + k * period, as hil_bridge's DeadlineScheduler on caller
 * time: due once now reaches the deadline; after an overrun (now a period or more
 * past it) the missed deadlines are skipped and the first one ahead fires at once. */
static uint8_t due(uint32_t *deadline, uint32_t period, uint32_t now) {
    if (!reached(now, *deadline)) {
        return 0;
    }
    if (reached(now, *deadline + period)) {
        *deadline += ((now - *deadline) / period + 1) * period;
    }
    *deadline += period;
    return 1;
}

void mcu_init(mcu_core *mcu, uint8_t checked, uint32_t now_ms) {
    memset(mcu, 0, sizeof(*mcu));
    hil_line_decoder_init(&mcu->decoder, checked, NULL);
    hil_line_decoder_relay(&mcu->decoder, "RTX", 1);
    hil_line_encoder_init(&mcu->encoder, checked);
    hil_line_decoder_init(&mcu->radio_decoder, checked, NULL);
    hil_line_decoder_relay(&mcu->radio_decoder, "RRXRST", 2);
    hil_line_encoder_init(&mcu->radio_encoder, checked);
    mcu->radio_heard_ms = now_ms;
    mcu->watchdog_ms = MCU_WATCHDOG_MS;
    mcu->start_ms = now_ms;
    mcu->last_heartbeat_ms = now_ms;
    mcu->next_telemetry_ms = now_ms + MCU_TELEMETRY_MS;
    mcu->next_led_ms = now_ms + MCU_LED_MS;
    mcu->tl2[MCU_TL2_ULTRASONIC_TENTHS] = 2000; /* saturated until the first echo */
}

void mcu_feed(mcu_core *mcu, uint8_t byte, uint32_t now_ms) {
    hil_line_message message;
    /* A timeout that expired before this byte arrived counts first. */
    check_watchdog(mcu, now_ms);
    check_radio(mcu, now_ms);
    if (hil_line_feed(&mcu->decoder, byte, &message)) {
        handle(mcu, &message, now_ms);
    }
}

void mcu_radio_begin(mcu_core *mcu, uint32_t now_ms) {
    mcu->has_radio = 1;
    mcu->radio_lost = 0;
    mcu->radio_heard_ms = now_ms;
}

void mcu_radio_feed(mcu_core *mcu, uint8_t byte, uint32_t now_ms) {
    hil_line_message message;
    if (!mcu->has_radio) {
        return;
    }
    check_radio(mcu, now_ms);
    if (!hil_line_feed(&mcu->radio_decoder, byte, &message)) {
        return;
    }
    if (message.type != HIL_MSG_RELAY) {
        mcu->radio_unexpected++;
        return;
    }
    if (message.text[1] == 'S') { /* RST: the module is alive */
        mcu->radio_heard_ms = now_ms;
        mcu->radio_lost = 0;
    }
    relay_to_command(mcu, &message);
}

uint8_t mcu_radio_take(mcu_core *mcu, char *out, uint8_t capacity) {
    uint8_t n = mcu->radio_out_length < capacity ? mcu->radio_out_length : capacity;
    memcpy(out, mcu->radio_out, n);
    memmove(mcu->radio_out, mcu->radio_out + n, (size_t)(mcu->radio_out_length - n));
    mcu->radio_out_length = (uint8_t)(mcu->radio_out_length - n);
    return n;
}

void mcu_tick(mcu_core *mcu, uint32_t now_ms) {
    check_watchdog(mcu, now_ms);
    check_radio(mcu, now_ms);
    if (due(&mcu->next_telemetry_ms, MCU_TELEMETRY_MS, now_ms)) {
        send_telemetry(mcu);
    }
    if (due(&mcu->next_led_ms, MCU_LED_MS, now_ms)) {
        /* Deadline k switches the LED on for even k, as the virtual MCU's parity does. */
        mcu->led_on = (uint8_t)((((mcu->next_led_ms - mcu->start_ms) / MCU_LED_MS) % 2) == 0);
    }
}

uint16_t mcu_take(mcu_core *mcu, char *out, uint16_t capacity) {
    uint16_t n = mcu->out_length < capacity ? mcu->out_length : capacity;
    memcpy(out, mcu->out, n);
    memmove(mcu->out, mcu->out + n, (size_t)(mcu->out_length - n));
    mcu->out_length = (uint16_t)(mcu->out_length - n);
    return n;
}

uint16_t mcu_enable_duty(int16_t command, uint16_t full) {
    int32_t magnitude = command < 0 ? -(int32_t)command : command;
    if (magnitude > MCU_MAX_COMMAND) {
        magnitude = MCU_MAX_COMMAND;
    }
    return (uint16_t)hil_rounding_map(magnitude, 0, MCU_MAX_COMMAND, 0, full);
}
