/* Servo: the pulse train (see Servo.h for the API and what it uses).
 *
 * Each timer used runs in normal mode (TCCRnA = 0, WGMn3:0 = 0) at F_CPU / 8 (CSn1),
 * counting 0..0xFFFF and wrapping; its output compare A interrupt marks every edge of
 * its servos' pulses. An edge is scheduled relative to the previous scheduled edge,
 * not to when the handler ran, so a late handler shifts neither the widths nor the
 * frame. In one handler call the pulse under way ends and the next attached servo's
 * pulse starts; after the timer's last servo the frame's rest runs out
 * (REFRESH_INTERVAL from its first pulse), then the next frame starts. A frame with
 * no servo attached stops the timer's interrupt until a servo attaches again.
 */
#include <Arduino.h>
#include <avr/interrupt.h>
#include <util/atomic.h>

#include "Servo.h"

namespace {

/* Timer ticks of `us` microseconds (the timers count at F_CPU / 8). */
constexpr uint16_t ticks(uint32_t us) { return static_cast<uint16_t>(us * (F_CPU / 1000000UL) / 8); }

constexpr uint16_t kFrameTicks = ticks(REFRESH_INTERVAL);
/* The least time between a frame's last pulse and the next frame's first. */
constexpr uint16_t kGapTicks = ticks(100);
/* When a started timer first interrupts, and how soon an edge found already passed comes. */
constexpr uint16_t kStartTicks = ticks(16);
constexpr uint16_t kLateTicks = ticks(8);
/* A pulse starts some 35 CPU cycles after the handler ended the one before (measured in
 * simavr), while its end comes on time: each pulse is scheduled this much longer. */
constexpr uint16_t kTrimTicks = 32 / 8;
/* TimerState::next while the frame's rest runs out. */
constexpr uint8_t kRest = SERVOS_PER_TIMER + 1;

struct Channel {
    volatile uint8_t *port; /* the pin's PORTx; nullptr: the channel is free */
    uint8_t mask;
    uint16_t width; /* ticks */
};

struct TimerState {
    volatile uint8_t *raised; /* the port of the pin whose pulse is on, or nullptr */
    uint8_t raised_mask;
    uint8_t next; /* the next channel to look at, or kRest */
    bool running;
    uint16_t edge;    /* the compare value of the next edge */
    uint32_t elapsed; /* ticks of the frame's pulses so far */
};

Channel channels[MAX_SERVOS];
TimerState timers[SERVO_TIMERS];

inline void schedule(TimerState &s, uint16_t delay, volatile uint16_t &tcnt, volatile uint16_t &ocr) {
    s.edge += delay;
    const uint16_t now = tcnt;
    if (static_cast<uint16_t>(s.edge - now) > delay) {
        s.edge = now + kLateTicks; /* the handler came after the edge: at once, not a wrap later */
    }
    ocr = s.edge;
}

/* One compare interrupt of timer `t`: end the pulse under way, start the next. */
inline void service(uint8_t t, volatile uint16_t &tcnt, volatile uint16_t &ocr, volatile uint8_t &timsk,
                    uint8_t enable) __attribute__((always_inline));
inline void service(uint8_t t, volatile uint16_t &tcnt, volatile uint16_t &ocr, volatile uint8_t &timsk,
                    uint8_t enable) {
    TimerState &s = timers[t];
    if (s.raised != nullptr) {
        *s.raised &= static_cast<uint8_t>(~s.raised_mask);
        s.raised = nullptr;
    }
    if (s.next == kRest) { /* the frame is over: a new one */
        s.next = 0;
        s.elapsed = 0;
    }
    Channel *servos = &channels[t * SERVOS_PER_TIMER];
    while (s.next < SERVOS_PER_TIMER) {
        Channel &c = servos[s.next++];
        if (c.port != nullptr) {
            *c.port |= c.mask;
            s.raised = c.port;
            s.raised_mask = c.mask;
            s.elapsed += c.width + kTrimTicks;
            schedule(s, c.width + kTrimTicks, tcnt, ocr);
            return;
        }
    }
    if (s.elapsed == 0) { /* nobody attached */
        timsk &= static_cast<uint8_t>(~enable);
        s.running = false;
        return;
    }
    const uint16_t rest = s.elapsed + kGapTicks < kFrameTicks ? kFrameTicks - s.elapsed : kGapTicks;
    s.next = kRest;
    schedule(s, rest, tcnt, ocr);
}

void prepare(TimerState &s) {
    s.raised = nullptr;
    s.next = kRest; /* the first interrupt starts a frame */
    s.elapsed = 0;
    s.edge = kStartTicks;
    s.running = true;
}

}  // namespace

/* The handler and the start of timer n, which serves timers[index]. */
#define HIL_SERVO_TIMER(n, index)                                                   \
    ISR(TIMER##n##_COMPA_vect) { service(index, TCNT##n, OCR##n##A, TIMSK##n, _BV(OCIE##n##A)); } \
    static void start_timer##n() {                                                  \
        prepare(timers[index]);                                                     \
        TCCR##n##A = 0;                                                             \
        TCCR##n##B = _BV(CS##n##1);                                                 \
        TCNT##n = 0;                                                                \
        OCR##n##A = kStartTicks;                                                    \
        TIFR##n = _BV(OCF##n##A);                                                   \
        TIMSK##n |= _BV(OCIE##n##A);                                                \
    }

#if SERVO_TIMERS == 4
HIL_SERVO_TIMER(5, 0)
HIL_SERVO_TIMER(1, 1)
HIL_SERVO_TIMER(3, 2)
HIL_SERVO_TIMER(4, 3)
static void start_timer(uint8_t t) {
    switch (t) {
    case 0: start_timer5(); break;
    case 1: start_timer1(); break;
    case 2: start_timer3(); break;
    default: start_timer4(); break;
    }
}
#else
HIL_SERVO_TIMER(1, 0)
static void start_timer(uint8_t) { start_timer1(); }
#endif

Servo::Servo()
    : channel_(INVALID_SERVO), min_us_(MIN_PULSE_WIDTH), max_us_(MAX_PULSE_WIDTH),
      width_us_(DEFAULT_PULSE_WIDTH) {}

uint8_t Servo::attach(int pin) { return attach(pin, MIN_PULSE_WIDTH, MAX_PULSE_WIDTH); }

uint8_t Servo::attach(int pin, int min, int max) {
    if (pin < 0 || pin >= NUM_DIGITAL_PINS || min <= 0 || max <= min || max > SERVO_MAX_LIMIT) {
        return INVALID_SERVO;
    }
    const uint8_t port = digitalPinToPort(pin);
    if (port == NOT_A_PIN) {
        return INVALID_SERVO;
    }
    min_us_ = static_cast<uint16_t>(min);
    max_us_ = static_cast<uint16_t>(max);
    width_us_ = constrain(width_us_, min_us_, max_us_);
    digitalWrite(pin, LOW); /* also ends analogWrite on the pin */
    pinMode(pin, OUTPUT);
    uint8_t channel = channel_;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {
        for (uint8_t i = 0; channel == INVALID_SERVO && i < MAX_SERVOS; ++i) {
            if (channels[i].port == nullptr) {
                channel = i;
            }
        }
        if (channel != INVALID_SERVO) {
            Channel &c = channels[channel];
            c.mask = digitalPinToBitMask(pin);
            c.width = ticks(width_us_);
            c.port = portOutputRegister(port);
            const uint8_t t = channel / SERVOS_PER_TIMER;
            if (!timers[t].running) {
                start_timer(t);
            }
        }
    }
    channel_ = channel;
    return channel;
}

void Servo::detach() {
    if (channel_ == INVALID_SERVO) {
        return;
    }
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) { channels[channel_].port = nullptr; }
    channel_ = INVALID_SERVO;
}

void Servo::write(int value) {
    if (value < MIN_PULSE_WIDTH) {
        const int32_t angle = constrain(value, 0, 180);
        value = min_us_ + static_cast<int>((angle * (max_us_ - min_us_) + 90) / 180);
    }
    writeMicroseconds(value);
}

void Servo::writeMicroseconds(int value) {
    width_us_ = static_cast<uint16_t>(constrain(value, static_cast<int>(min_us_), static_cast<int>(max_us_)));
    if (channel_ != INVALID_SERVO) {
        const uint16_t width = ticks(width_us_);
        ATOMIC_BLOCK(ATOMIC_RESTORESTATE) { channels[channel_].width = width; }
    }
}

int Servo::read() {
    const int32_t range = max_us_ - min_us_;
    return static_cast<int>((static_cast<int32_t>(width_us_ - min_us_) * 180 + range / 2) / range);
}

int Servo::readMicroseconds() { return width_us_; }

bool Servo::attached() { return channel_ != INVALID_SERVO; }
