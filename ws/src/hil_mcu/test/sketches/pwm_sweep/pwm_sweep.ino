// PWM sweep: analogWrite and digitalWrite on the board's PWM pins, on command.
//
// Commands on Serial (115200 baud), one per line, each answered "ok":
//   a <pin> <value>        analogWrite(pin, value)
//   A <value> <step>       every PWM pin i (in pin order) gets (value + i * step) % 256
//   d <pin> <level>        digitalWrite(pin, level) (pinMode OUTPUT first)
//   s <pin> <high> <low>   software PWM on pin: digitalWrite HIGH for <high> us, LOW for
//                          <low> us, from loop(); "s <pin> 0 0" stops it
//   r <address> <value>    write a byte to a register (data-space address, decimal): timer
//                          modes the Arduino core does not set
// Written for the tests of the firmware-in-the-loop harness, in the common Arduino style.

char line[32];
byte used = 0;
int softPin = -1;
unsigned long softHigh = 0, softLow = 0, softSince = 0;
bool softLevel = false;

void setup() {
  Serial.begin(115200);
}

void allPins(int value, int step) {
  int i = 0;
  for (int pin = 0; pin < NUM_DIGITAL_PINS; pin++) {
    if (digitalPinHasPWM(pin)) {
      analogWrite(pin, (value + i * step) % 256);
      i++;
    }
  }
}

void run(char *text) {
  char command = text[0];
  char *rest = text + 1;
  long first = strtol(rest, &rest, 10);
  long second = strtol(rest, &rest, 10);
  long third = strtol(rest, &rest, 10);
  if (command == 'a') {
    analogWrite(first, second);
  } else if (command == 'A') {
    allPins(first, second);
  } else if (command == 'd') {
    pinMode(first, OUTPUT);
    digitalWrite(first, second ? HIGH : LOW);
  } else if (command == 'r') {
    _SFR_MEM8(first) = second;
  } else if (command == 's') {
    pinMode(first, OUTPUT);
    softPin = (second > 0) ? first : -1;
    softHigh = second;
    softLow = third;
    softSince = micros();
  }
  Serial.println("ok");
}

void loop() {
  while (Serial.available() > 0) {
    char c = Serial.read();
    if (c == '\n') {
      line[used] = 0;
      run(line);
      used = 0;
    } else if (used < sizeof(line) - 1) {
      line[used++] = c;
    }
  }
  if (softPin >= 0) {
    unsigned long now = micros();
    if (now - softSince >= (softLevel ? softHigh : softLow)) {
      softSince = now;
      softLevel = !softLevel;
      digitalWrite(softPin, softLevel ? HIGH : LOW);
    }
  }
}
