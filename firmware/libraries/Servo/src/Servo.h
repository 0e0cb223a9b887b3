/* Servo: hobby servos on any digital pin, with the Arduino Servo library's public API.
 *
 * The HIL robot sim's own implementation (Apache-2.0), written from the ATmega328P and
 * ATmega2560 datasheets (16-bit Timer/Counter, normal mode, output compare A interrupt)
 * and the Arduino reference of the Servo API; it shares no code with the Arduino
 * library. Sketches written for that library build and behave the same:
 *
 *   #include <Servo.h>
 *   Servo pan;
 *   pan.attach(9);            // or attach(9, 1000, 2000): the widths of 0 and 180 degrees
 *   pan.write(90);            // an angle (0..180), or a width in us when >= MIN_PULSE_WIDTH
 *   pan.writeMicroseconds(1500);
 *   pan.read();               // the angle last written; readMicroseconds() its width
 *   pan.detach();             // no more pulses; attached() says which
 *
 * Each timer serves up to SERVOS_PER_TIMER servos: their pulses follow each other
 * (one servo's pulse ends, the next one's starts) and a frame of the timer's servos
 * repeats every REFRESH_INTERVAL us (longer only when 12 long pulses add up to more).
 * The timer counts at F_CPU / 8 (0.5 us at 16 MHz), so widths are exact to the
 * microsecond; an edge comes a few microseconds late when other interrupts delay its
 * handler, and a handler delayed beyond an edge makes that pulse longer, never stuck.
 * Timers used, in the order servos take them: Timer1 on the ATmega328P/168 (UNO,
 * Nano: 12 servos; analogWrite on pins 9 and 10 stops once a servo is attached);
 * Timer5, Timer1, Timer3, Timer4 on the ATmega2560/1280 (Mega: 48 servos; the first
 * 12 take Timer5, so analogWrite stays on every pin but 44, 45 and 46).
 */
#ifndef HIL_SERVO_H
#define HIL_SERVO_H

#include <inttypes.h>

#if defined(__AVR_ATmega2560__) || defined(__AVR_ATmega1280__)
#define SERVO_TIMERS 4
#elif defined(__AVR_ATmega328P__) || defined(__AVR_ATmega328__) || defined(__AVR_ATmega168__) || \
    defined(__AVR_ATmega168P__)
#define SERVO_TIMERS 1
#else
#error "this Servo library supports the ATmega328P/168 (UNO, Nano) and the ATmega2560/1280 (Mega)"
#endif

#define MIN_PULSE_WIDTH 544      /* us: the default width of 0 degrees */
#define MAX_PULSE_WIDTH 2400     /* us: the default width of 180 degrees */
#define DEFAULT_PULSE_WIDTH 1500 /* us: what an attached servo gets until written */
#define REFRESH_INTERVAL 20000   /* us: the frame */
#define SERVOS_PER_TIMER 12
#define MAX_SERVOS (SERVO_TIMERS * SERVOS_PER_TIMER)
#define INVALID_SERVO 255
/* The widest pulse attach() takes as a maximum (us). */
#define SERVO_MAX_LIMIT 10000

class Servo {
public:
    Servo();
    /* Start pulses on `pin` with the default widths. Returns the servo's channel
     * (0..MAX_SERVOS-1), or INVALID_SERVO when the pin is none or every channel is taken. */
    uint8_t attach(int pin);
    /* As attach(pin), with the widths of 0 and 180 degrees in us (0 < min < max <=
     * SERVO_MAX_LIMIT, else INVALID_SERVO). Attaching an attached servo moves it. */
    uint8_t attach(int pin, int min, int max);
    /* Stop the pulses (the current one still ends on time) and free the channel. */
    void detach();
    /* An angle in degrees (below MIN_PULSE_WIDTH, limited to 0..180), else a width in us. */
    void write(int value);
    /* The pulse width in us, limited to the attached min..max. */
    void writeMicroseconds(int value);
    /* The angle of the width last written (0..180). */
    int read();
    /* The width last written, in us. */
    int readMicroseconds();
    bool attached();

private:
    uint8_t channel_;
    uint16_t min_us_;
    uint16_t max_us_;
    uint16_t width_us_;
};

#endif
