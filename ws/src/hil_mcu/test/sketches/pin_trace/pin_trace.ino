// Pin trace: a square wave of known timing, two PWM outputs and a byte on Serial.
//
// Written for the tests of the firmware-in-the-loop harness's pin trace, in the common
// Arduino style:
//   - analogWrite(9, 64): Timer1's phase-correct PWM (490 Hz), 64/255 high;
//   - analogWrite(5, 192): Timer0's fast PWM (977 Hz), 193/256 high;
//   - 'U' on Serial at 115200 baud, then "ready";
//   - pin 7 toggled every HALF_PERIOD_US with interrupts off, so nothing stretches it:
//     a square wave whose half period is HALF_PERIOD_US x 16 cycles plus the few cycles
//     of the toggle and the loop.

const int TOGGLE_PIN = 7;
const double HALF_PERIOD_US = 250;

void setup() {
  Serial.begin(115200);
  pinMode(TOGGLE_PIN, OUTPUT);
  analogWrite(9, 64);
  analogWrite(5, 192);
  Serial.write('U');
  Serial.println("ready");
  Serial.flush();
}

void loop() {
  noInterrupts();
  for (;;) {
    PORTD ^= _BV(PD7);
    _delay_us(HALF_PERIOD_US);
  }
}
