// A Bluetooth-commanded car in the style of the HC-05/HC-06 tutorials: the module on
// SoftwareSerial (pins 10 and 11), one letter per command, an L298 driven by its IN
// pins only (ENA/ENB jumpered high).
//
// On the module's link (BT_BAUD, default 9600): "car ready" at boot; each command
// letter is answered: F forward, B back, L left, R right, S stop ("OK F"...), anything
// else "? <letter>" (newlines ignored). The IN pins: left 4/5, right 6/7.
// Written for the tests of the firmware-in-the-loop harness, in the common Arduino style.

#include <SoftwareSerial.h>

#ifndef BT_BAUD
#define BT_BAUD 9600
#endif

SoftwareSerial bluetooth(10, 11);  // RX, TX

const int IN1 = 4, IN2 = 5, IN3 = 6, IN4 = 7;

void drive(int a, int b, int c, int d) {
  digitalWrite(IN1, a);
  digitalWrite(IN2, b);
  digitalWrite(IN3, c);
  digitalWrite(IN4, d);
}

void setup() {
  pinMode(IN1, OUTPUT);
  pinMode(IN2, OUTPUT);
  pinMode(IN3, OUTPUT);
  pinMode(IN4, OUTPUT);
  drive(LOW, LOW, LOW, LOW);
  bluetooth.begin(BT_BAUD);
  bluetooth.println("car ready");
}

void loop() {
  if (bluetooth.available()) {
    char command = bluetooth.read();
    switch (command) {
      case 'F': drive(HIGH, LOW, HIGH, LOW); break;
      case 'B': drive(LOW, HIGH, LOW, HIGH); break;
      case 'L': drive(LOW, HIGH, HIGH, LOW); break;
      case 'R': drive(HIGH, LOW, LOW, HIGH); break;
      case 'S': drive(LOW, LOW, LOW, LOW); break;
      case '\r':
      case '\n': return;
      default:
        bluetooth.print("? ");
        bluetooth.println(command);
        return;
    }
    bluetooth.print("OK ");
    bluetooth.println(command);
  }
}
