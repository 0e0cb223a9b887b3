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
