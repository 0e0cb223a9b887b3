/* Pin map and build options of the robot MCU (Arduino Nano / UNO, ATmega328P).
 *
 * Pins 0 and 1 are the serial port (the command link to the robot brain). The bridge
 * board's wiring file (hil_bridge's generator) connects to these same pins.
 */
#ifndef ROBOT_MCU_PINS_H
#define ROBOT_MCU_PINS_H

/* Bumper limit switches, on the two external interrupt pins (INT0, INT1). */
#define PIN_BUMPER_LEFT 2
#define PIN_BUMPER_RIGHT 3
/* Level of a pressed bumper: HIGH as the bridge board drives it; a real switch to
 * ground with the pull-up on reads LOW when pressed. */
#ifndef BUMPER_PRESSED_LEVEL
#define BUMPER_PRESSED_LEVEL HIGH
#endif
#ifndef BUMPER_PULLUP
#define BUMPER_PULLUP 0
#endif

/* L298-style motor channels: enable (PWM, Timer0 at 980 Hz) and direction A/B. */
#define PIN_MOTOR_LEFT_ENABLE 5
#define PIN_MOTOR_LEFT_A 7
#define PIN_MOTOR_LEFT_B 8
#define PIN_MOTOR_RIGHT_ENABLE 6
#define PIN_MOTOR_RIGHT_A 11
#define PIN_MOTOR_RIGHT_B 12

/* HC-SR04: trigger out, echo in on a pin-change interrupt (pin 9 = PB1 = PCINT1). */
#define PIN_ULTRASONIC_TRIGGER 4
#define PIN_ULTRASONIC_ECHO 9
#define ULTRASONIC_ECHO_VECT PCINT0_vect
#define ULTRASONIC_ECHO_PCMSK PCMSK0
#define ULTRASONIC_ECHO_PCINT PCINT1
#define ULTRASONIC_ECHO_PCIE PCIE0
#define ULTRASONIC_ECHO_PINREG PINB
#define ULTRASONIC_ECHO_BIT 1

/* Sharp IR ranger and the four photoresistors (front, left, back, right) on the ADC.
 * A6 exists on the Nano (and the UNO's SMD boards); on a DIP UNO move light 3. */
#define PIN_IR A0
#define PIN_LIGHT_0 A1
#define PIN_LIGHT_1 A2
#define PIN_LIGHT_2 A3
#define PIN_LIGHT_3 A6

/* HMC5883L compass on I2C (A4 = SDA, A5 = SCL); 0 leaves it out (heading reads 0). */
#ifndef HAS_COMPASS
#define HAS_COMPASS 1
#endif
#define COMPASS_ADDRESS 0x1E

/* Radio link: the radio module (ESP8266-like) on the UART of an SC16IS750 I2C-to-UART
 * bridge, the same I2C bus (A4/A5), 7-bit address 0x4D (A1 = A0 = VDD), crystal
 * 14.7456 MHz, 115200 baud 8N1. 0 leaves it out; a bridge that does not answer at
 * power-on means no radio link (RTX then gets "ERR,no radio"). */
#ifndef HAS_RADIO
#define HAS_RADIO 1
#endif
#define RADIO_ADDRESS 0x4D
#define RADIO_XTAL_HZ 14745600UL
#define RADIO_BAUD 115200UL
/* The bridge is polled this often (ms): its 64-byte receive FIFO fills in 5.6 ms at
 * 115200 baud, and a poll reads up to 32 bytes (the Wire buffer). */
#define RADIO_POLL_MS 2u
/* I2C clock with the radio: 400 kHz (the HMC5883L and SC16IS750 both take it), or
 * the bus could not carry 115200 baud. */
#define I2C_CLOCK_HZ 400000UL

#define PIN_LED 13

/* Command link. HIL_CHECKED 1 builds the checked line protocol (the control loop's
 * `checked` parameter must match). */
#ifndef HIL_BAUD
#define HIL_BAUD 38400 /* robot_control's default `baud` */
#endif
#ifndef HIL_CHECKED
#define HIL_CHECKED 0
#endif

/* Sensor timing (ms): an HC-SR04 ping every 60 ms (its datasheet's minimum cycle),
 * ADC and bumpers every 20 ms, the compass every 100 ms. */
#define ULTRASONIC_PERIOD_MS 60u
#define ULTRASONIC_TIMEOUT_MS 40u
#define ANALOG_PERIOD_MS 20u
#define COMPASS_PERIOD_MS 100u

#endif
