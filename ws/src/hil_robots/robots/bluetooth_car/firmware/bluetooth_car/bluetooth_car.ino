/* bluetooth_car: a two-wheeled car driven from a phone over a Bluetooth serial module,
 * written for the HIL robot sim in the style of the public Bluetooth RC car sketches
 * (our own code).
 *
 * Hardware (robot.yaml): an Arduino UNO, an HC-05 style module on SoftwareSerial (its
 * TX to pin 2, its RX to pin 3) at 9600 baud, an L298N with ENA/ENB jumpered to 5 V
 * (full speed: the IN levels alone pick the way each motor turns), a passive buzzer on
 * pin 8 that beeps while the car backs up. The phone app sends one letter a command:
 *
 *   F forward, B back (beeping), L spin left, R spin right, S stop
 *
 * anything else is ignored. Each command is echoed on Serial (USB, 9600) for
 * debugging. Tabs: this one (the commands), drive.ino, beeper.ino.
 */
#include <SoftwareSerial.h>

#define BT_RX 2 /* the module's TX */
#define BT_TX 3 /* the module's RX */

SoftwareSerial bluetooth(BT_RX, BT_TX);
char state = 'S';

void setup() {
  Serial.begin(9600);
  bluetooth.begin(9600);
  drive_begin();
  Serial.println(F("bluetooth_car ready"));
}

void loop() {
  if (bluetooth.available() > 0) {
    char letter = bluetooth.read();
    if (strchr("FBLRS", letter) != NULL) {
      state = letter;
      Serial.print(F("command "));
      Serial.println(state);
      switch (state) {
        case 'F': drive(1, 1); break;
        case 'B': drive(-1, -1); break;
        case 'L': drive(-1, 1); break;
        case 'R': drive(1, -1); break;
        default: drive(0, 0); break;
      }
    }
  }
  beep_while(state == 'B');
}
